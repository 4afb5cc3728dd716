import { register } from 'node:module';

register('./resolve-src.mjs', import.meta.url);
