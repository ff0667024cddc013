// This checkout's image, built by a process of its own: the container project's set-up (image-setup.ts)
// starts it at the lowest CPU priority when the run begins, and marks it built or failed by how this
// process exits (a failure's message on stderr). Argument: the image's tag.
import { buildImage } from './image-setup.js';

await buildImage(process.argv[2] as string);
