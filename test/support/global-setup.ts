// Once per test run, before the first file: what every file would otherwise pay for on its own.
// Each is handed to the files with `provide` (read with `inject`); a file run without this setup
// (another config) falls back to doing the work itself.
import type { TestProject } from 'vitest/node';
import { makePostgresTemplate } from '../inbox/support/postgres-template.ts';
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
  const template = process.env.INTEGRATION_TEST_PG_URL ? undefined : makePostgresTemplate();
  if (template) project.provide('postgresTemplate', template.dir);
  return async () => {
    cli.remove();
    await template?.remove();
  };
}
