// Item statuses outside the documented ones are kept in results but counted in no summary field.
import { describe, expect, it } from 'vitest';
import { CatalogResource } from '../../../src/resources/catalog.ts';
import { createFakeService, product } from './fake-service.ts';

describe('summary counts', () => {
  it.each(['constructor', 'toString', '__proto__', 'valueOf'])('a status %s (not a known one) is counted nowhere, and adds no key', async (status) => {
    const service = createFakeService({ tamper: (_, answer) => void (answer.results[0]!.status = status) });
    const result = await new CatalogResource(service.requester).upsertProducts([product(0), product(1)]);
    expect(result.summary).toEqual({ created: 1, updated: 0, errors: 0 });
    expect(Object.keys(result.summary).sort()).toEqual(['created', 'errors', 'updated']);
    expect(result.results.map((r) => r.status)).toEqual([status, 'created']);
  });
});
