import type { Route } from './route.ts';

export const PREFIX = '/integration/v1';

/** The developer's controls (`integration-sdk sandbox order …`), outside the API surface. */
export const CONTROL_PREFIX = '/_sandbox';

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/**
 * Finds the route of a path relative to the prefix. A known path with another method is no match
 * either: the error table has no 405, so both answer 404 (wire assumption).
 */
export function matchRoute(routes: readonly Route[], method: string, path: string): RouteMatch | null {
  const segments = path.split('/').slice(1);
  for (const route of routes) {
    if (route.method !== method) continue;
    const pattern = route.path.split('/').slice(1);
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      const segment = segments[i] ?? '';
      if (part.startsWith(':')) {
        const value = safeDecode(segment);
        if (value === null || value === '') return false;
        params[part.slice(1)] = value;
        return true;
      }
      return part === segment;
    });
    if (matches) return { route, params };
  }
  return null;
}

function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
