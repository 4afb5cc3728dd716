// The allow-list masking (src/dashboard/personal-data.ts) holds on every route that carries a
// payload's fields: the entry page, its JSON route and its download, over plain HTTP on a real
// SQLite inbox; showPersonalData shows them on all three.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDashboard } from 'integration-sdk/dashboard';
import { deliveryRequest, ORDER, sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { TOKEN } from './support.ts';

const PHONE = '+55 11 98765-4321';
const DELIVERY_ID = '55555555-0000-4000-8000-000000000001';
const fixture = sqliteInbox();
afterAll(() => fixture.dispose());

beforeAll(async () => {
  const items = [{ ...(ORDER.items as Record<string, unknown>[])[0], notes: `no onions; call ${PHONE}` }];
  const data = { ...ORDER, items, metadata: { whatsapp: PHONE }, courier_note: `ring ${PHONE}` };
  expect((await fixture.inbox.handler(deliveryRequest({ event: 'order.created', data }, { nowMs: Date.now(), deliveryId: DELIVERY_ID }))).status).toBe(200);
});

const read = async (showPersonalData: boolean) => {
  const dashboard = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN }, showPersonalData });
  const get = (path: string) => dashboard.fetch(new Request(`http://dash.test${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  const download = await get(`/entries/${DELIVERY_ID}/payload.json`);
  expect(download.status).toBe(200);
  expect(download.headers.get('content-disposition')).toBe(`attachment; filename="entry-${DELIVERY_ID}-payload.json"`);
  return {
    page: await (await get(`/entries/${DELIVERY_ID}`)).text(),
    json: await (await get(`/api/entries/${DELIVERY_ID}`)).text(),
    list: await (await get('/api/entries')).text(),
    download: await download.text(),
  };
};

it('masks a phone in items[].notes, metadata and an unknown field on the entry page, its JSON route and its download', async () => {
  const masked = await read(false);
  for (const [route, text] of Object.entries(masked)) expect(text, route).not.toContain('98765');
  expect(masked.page).toContain(`href="/entries/${DELIVERY_ID}/payload.json" download`);
  const { entry, payload } = JSON.parse(masked.json) as { entry: Record<string, unknown>; payload: { kind: string; value: { data: { items: { notes: string; product_name: string }[]; display_number: string } } } };
  expect(entry).toMatchObject({ id: DELIVERY_ID, event: 'order.created', status: 'pending' });
  expect('payload' in entry).toBe(false);
  expect(payload.kind).toBe('json');
  expect(payload.value.data.items[0]!.notes).toBe('•••');
  expect(payload.value.data.display_number).toBe(ORDER.display_number);
  expect(JSON.parse(masked.download)).toEqual(payload.value);
});

it('shows them on all three with showPersonalData', async () => {
  const shown = await read(true);
  for (const route of ['page', 'json', 'download'] as const) expect(shown[route], route).toContain(PHONE);
});
