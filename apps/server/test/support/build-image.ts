// This checkout's image, built by a process of its own: the container project's set-up (image-setup.ts)
// starts it at the lowest CPU priority when the run begins, and the project's files wait for its marks
// (support/image.ts). Argument: the image's tag.
import { writeFileSync } from 'node:fs';
import { buildImage, buildMarks } from './image-setup.js';

const tag = process.argv[2] as string;
const marks = buildMarks(tag);
try {
  await buildImage(tag);
  writeFileSync(marks.built, '');
} catch (error) {
  writeFileSync(marks.failed, (error as Error).message);
  process.exitCode = 1;
}
