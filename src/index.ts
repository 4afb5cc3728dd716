export * from "./errors/index.ts"; export * from "./schemas/index.ts";
