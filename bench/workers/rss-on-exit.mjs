// Preloaded into a process whose peak RSS a figure needs (`node --import`): prints it as the
// last stderr line on exit, however the process ends (the CLI calls process.exit).
process.on('exit', () => process.stderr.write(`\nmaxRSS_KiB ${process.resourceUsage().maxRSS}\n`));
