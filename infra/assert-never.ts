/** Exhaustiveness check for a `switch` over a union; in infra so every layer may use it. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
