// Entry point; filled in by this stage's work.
export {};
