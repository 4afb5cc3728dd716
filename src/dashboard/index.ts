/**
 * `integration-sdk/dashboard`: the operator's web page over the inbox, the service and the sync
 * history. Server-rendered HTML with no script, closed without `auth`, personal data masked.
 */
export { createDashboard, type Dashboard, type DashboardOptions } from './create-dashboard.ts';
export type { DashboardAction, DashboardAuth } from './auth.ts';
export type { DashboardClient, DashboardSync, DashboardSyncRun, DashboardSyncRunError } from './data.ts';
