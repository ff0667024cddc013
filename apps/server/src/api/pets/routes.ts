// The /pets router (mounted under the base path; relative paths, links built from req.baseUrl). Requests
// reaching it have passed authentication, rate limiting and validation against the contract; responses
// leaving it are validated too. No SQL here.
import { type NewPet, pageSize } from '@animal-store/spec';
import { type Request, type Response, Router } from 'express';
import { HttpError } from '../../http/http-error.js';
import { type IdempotencyStore, type PetFilter, type PetStore, petFilterNames } from '../../store/store.js';
import { idempotent, petLocation } from '../idempotency.js';
import type { Cursors } from './cursor.js';

const int64Max = 9_223_372_036_854_775_807n;

/** Judges a value against a contract schema before a write is committed (see schemaChecks). */
export type SchemaCheck = (schema: 'Pet', req: Request) => (value: unknown) => void;

/** Parses a decimal int64 id from its text, exactly (a Number would round ids beyond 2^53). */
const int64 = (raw: string): bigint | undefined => {
  const id = /^[0-9]{1,19}$/.test(raw) ? BigInt(raw) : 0n;
  return id >= 1n && id <= int64Max ? id : undefined;
};

export function petRoutes(
  pets: PetStore,
  cursors: Cursors,
  check: SchemaCheck,
  idempotency: IdempotencyStore,
): Router {
  const router = Router();

  router.get('/pets', async (req: Request, res: Response) => {
    // The filters given (store.ts, petFilterNames), as the validator let them through.
    const filter: PetFilter = Object.fromEntries(
      petFilterNames.flatMap((name) =>
        typeof req.query[name] === 'string' ? [[name, req.query[name]]] : [],
      ),
    );
    // The id filter, read from the raw query text so that every int64 is exact (parsed only when the
    // query names it: the validator let the name through). The raw text, too, tells what the client sent:
    // the validator fills in limit's default.
    if (req.query.id !== undefined) {
      const raw = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
      for (const name of ['limit', 'cursor']) {
        if (raw.has(name)) throw new HttpError(400, `query.${name} cannot be combined with query.id.`);
      }
      const ids = raw.getAll('id').map(int64);
      if (ids.some((id) => id === undefined)) {
        throw new HttpError(400, 'query.id must be integers from 1 to 9223372036854775807.');
      }
      res.status(200).json(await pets.getMany([...new Set(ids as bigint[])], filter));
      return;
    }
    const limit = Number(req.query.limit ?? pageSize.default);
    let afterId = 0;
    if (typeof req.query.cursor === 'string') {
      const position = cursors.decode(req.query.cursor);
      if (!position || petFilterNames.some((name) => position.filter[name] !== filter[name])) {
        throw new HttpError(
          400,
          `query.cursor is invalid, or was issued for other filters (${petFilterNames.join(', ')}).`,
        );
      }
      afterId = position.afterId;
    }
    const page = await pets.list({ limit, afterId, filter });
    const last = page.pets.at(-1);
    if (page.hasMore && last) {
      const query = new URLSearchParams({ limit: String(limit), ...filter });
      query.set('cursor', cursors.encode({ afterId: last.id, filter }));
      res.set('Link', `<${req.baseUrl}/pets?${query}>; rel="next"`);
    }
    res.status(200).json(page.pets);
  });

  router.post(
    '/pets',
    idempotent(idempotency, async (req: Request, res: Response) => {
      const body = req.body as NewPet;
      // The pet is committed only if the response describing it keeps the contract.
      const pet = await pets.create(
        { ...body, status: body.status ?? 'available' },
        check('Pet', req),
        res.locals.idempotency,
      );
      res.set('Location', petLocation(req.baseUrl, pet.id));
      res.status(201).json(pet);
    }),
  );

  router.get('/pets/:petId', async (req: Request, res: Response) => {
    const id = int64(String(req.params.petId));
    if (id === undefined) {
      throw new HttpError(400, 'path.petId must be an integer from 1 to 9223372036854775807.');
    }
    const pet = await pets.get(id);
    if (!pet) throw new HttpError(404, `Pet ${id} was not found.`);
    res.status(200).json(pet);
  });

  return router;
}
