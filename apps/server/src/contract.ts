// The server's view of the contracts: the bundled documents the validator enforces, and the facts derived
// from it, so that none is typed again here.
import { readFileSync } from 'node:fs';
import { servers } from '@animal-store/spec';
import { bundledAdminSpecPath, bundledSpecPath } from '@animal-store/spec/files';

type Response = { $ref?: string; headers?: Record<string, unknown> };
export type OpenApiDocument = {
  paths: Record<
    string,
    Record<string, { operationId?: string; parameters?: Parameter[]; responses?: Record<string, Response> }>
  >;
  components: {
    parameters: Record<string, Parameter>;
    schemas: Record<string, unknown>;
    responses?: Record<string, Response>;
  };
};
type Parameter = {
  $ref?: string;
  name: string;
  in: string;
  schema?: { type?: string; items?: { type?: string } };
};

export const loadContract = (): OpenApiDocument =>
  JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as OpenApiDocument;

/** The admin contract (served by the admin listener), and its base path (`/admin/v1`, from its server URL). */
export function loadAdminContract(): { contract: OpenApiDocument; basePath: string } {
  const contract = JSON.parse(readFileSync(bundledAdminSpecPath, 'utf8')) as OpenApiDocument & {
    servers: { url: string }[];
  };
  return { contract, basePath: new URL(contract.servers[0]?.url ?? '/', 'http://x').pathname };
}

/** The operation a request addresses: its operationId (`other` when none) and its path parameters as sent. */
export type ResolvedOperation = { id: string; params: Record<string, string> };

declare global {
  namespace Express {
    interface Locals {
      /** The contract's operation this request addresses, resolved once at the head of the chain. */
      operation?: ResolvedOperation;
    }
  }
}

/**
 * Matches a request's method and path (`/v1/pets/42`) to the contract's operation, on the paths' text: the
 * parameters are not decoded, so that resolving never fails a request. HEAD is GET's (see headAsGet).
 */
export function operations(contract: OpenApiDocument, basePath: string) {
  const routes = Object.entries(contract.paths).map(([path, item]) => ({
    matches: new RegExp(`^${basePath}${path.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}/?$`),
    byMethod: Object.fromEntries(
      Object.entries(item).flatMap(([method, op]) =>
        op.operationId ? [[method.toUpperCase(), op.operationId]] : [],
      ),
    ),
  }));
  const none: ResolvedOperation = Object.freeze({ id: 'other', params: Object.freeze({}) });
  return (method: string, path: string): ResolvedOperation => {
    for (const route of routes) {
      const match = route.matches.exec(path);
      if (match) {
        const id = route.byMethod[method === 'HEAD' ? 'GET' : method];
        return id ? { id, params: match.groups ?? none.params } : none;
      }
    }
    return none;
  };
}

/** The version segment every server URL of the contract ends in (`/v1`). */
export const basePath = new URL(servers.production).pathname;

const resolve = (api: OpenApiDocument, p: Parameter) =>
  p.$ref ? (api.components.parameters[p.$ref.split('/').pop() as string] as Parameter) : p;

/** Every query parameter the contract declares, by name (resolved; the same name is the same parameter). */
export function queryParameters(api: OpenApiDocument): Map<string, Parameter> {
  const found = new Map<string, Parameter>();
  for (const item of Object.values(api.paths)) {
    for (const operation of Object.values(item)) {
      for (const p of (operation.parameters ?? []).map((q) => resolve(api, q))) {
        if (p.in === 'query') found.set(p.name, p);
      }
    }
  }
  return found;
}

/** Query parameters the contract types as integers: they must be written as canonical decimals. */
export const integerQueryParameters = (api: OpenApiDocument): Set<string> =>
  new Set(
    [...queryParameters(api)]
      .filter(([, p]) => p.schema?.type === 'integer' || p.schema?.items?.type === 'integer')
      .map(([name]) => name),
  );

/** Every documented query parameter: the request log keeps only their values. */
export const documentedQuery = (api: OpenApiDocument): Set<string> => new Set(queryParameters(api).keys());

/** Every response header the contract declares (for CORS: what a page may read), in the contract's spelling. */
export function responseHeaders(api: OpenApiDocument): string[] {
  const found = new Set<string>();
  for (const item of Object.values(api.paths)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const resolved = response.$ref
          ? api.components.responses?.[response.$ref.split('/').pop() as string]
          : response;
        for (const name of Object.keys(resolved?.headers ?? {})) found.add(name);
      }
    }
  }
  return [...found].sort();
}
