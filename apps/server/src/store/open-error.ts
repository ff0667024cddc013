/** The store cannot be used; the message names the variable and the place, and says what to do. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}
