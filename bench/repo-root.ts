/** The repository's root (the folder with package.json), from the bench's source or its build alike. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function repositoryRoot(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
