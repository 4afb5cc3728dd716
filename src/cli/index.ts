#!/usr/bin/env node
// `npx integration-sdk`: for now only the sandbox command; the full command line comes with issue 12.
import '../sandbox/cli.ts';
