// Preloaded (`node --import`) into the command line: instead of running a command, it prints the
// `--help` text of every command, as `--help` shows it (added examples included), as one JSON
// array, and exits. One process instead of one per command.
import { Command } from 'commander';

Command.prototype.parseAsync = async function printHelpTexts() {
  const texts = [];
  const visit = (command) => {
    let text = '';
    command.configureOutput({ writeOut: (chunk) => void (text += chunk), writeErr: (chunk) => void (text += chunk) });
    command.outputHelp();
    texts.push(text);
    for (const sub of command.commands) visit(sub);
  };
  visit(this);
  process.stdout.write(JSON.stringify(texts));
  process.exit(0);
};
