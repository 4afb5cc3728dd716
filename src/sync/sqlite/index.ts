// Placeholder entry: filled in by its issue's work.
export {};
