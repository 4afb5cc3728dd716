/**
 * The test functions a store's conformance suite needs (the inbox's, the sync state's), so that a
 * user's own store runs the same suite under vitest, jest or node:test adapters.
 */

interface Assertion {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toHaveLength(length: number): void;
  toBeUndefined(): void;
  toBeNull(): void;
  not: Assertion;
}

/** The test functions the suite needs: pass vitest's (or jest's, node:test adapters) own. */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>): void;
  expect(value: unknown): Assertion;
  beforeEach(body: () => Promise<void>): void;
  afterEach(body: () => Promise<void>): void;
}
