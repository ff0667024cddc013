// Handlers for /pets. Requests reaching them have passed authentication, rate limiting and validation
// against the contract; responses leaving them are validated too. No SQL here.
import type { NewPet, PetStatus } from '@animal-store/spec';
import { type Request, type Response, Router } from 'express';
import { Problem } from '../http/problem.js';
import type { PetStore } from '../store/pets.js';
import type { Cursors } from './cursor.js';

const int64Max = 9_223_372_036_854_775_807n;

export function petRoutes(basePath: string, pets: PetStore, cursors: Cursors): Router {
  const router = Router();

  router.get(`${basePath}/pets`, (req: Request, res: Response) => {
    const limit = Number(req.query.limit ?? 20);
    const status = req.query.status as PetStatus | undefined;
    let afterId = 0;
    if (typeof req.query.cursor === 'string') {
      const position = cursors.decode(req.query.cursor);
      if (!position || position.status !== (status ?? null)) {
        throw new Problem(400, 'query.cursor is invalid, or was issued for another status filter.');
      }
      afterId = position.afterId;
    }
    const page = pets.list({ limit, afterId, ...(status && { status }) });
    const last = page.pets.at(-1);
    if (page.hasMore && last) {
      const query = new URLSearchParams({ limit: String(limit), ...(status && { status }) });
      query.set('cursor', cursors.encode({ afterId: last.id, status: status ?? null }));
      res.set('Link', `<${basePath}/pets?${query}>; rel="next"`);
    }
    res.status(200).json(page.pets);
  });

  router.post(`${basePath}/pets`, (req: Request, res: Response) => {
    const body = req.body as NewPet;
    res.status(201).json(pets.create({ ...body, status: body.status ?? 'available' }));
  });

  router.get(`${basePath}/pets/:petId`, (req: Request, res: Response) => {
    // Parsed from the raw path text: a Number would round ids beyond 2^53 onto other pets.
    const raw = String(req.params.petId);
    const id = /^[0-9]{1,19}$/.test(raw) ? BigInt(raw) : 0n;
    if (id < 1n || id > int64Max) {
      throw new Problem(400, 'path.petId must be an integer from 1 to 9223372036854775807.');
    }
    const pet = pets.get(id);
    if (!pet) throw new Problem(404, `Pet ${id} was not found.`);
    res.status(200).json(pet);
  });

  return router;
}
