/**
 * The few error classes the app throws on purpose. One middleware maps them to an HTML page or JSON;
 * anything else is a 500 whose details go to the log only.
 */
export type FieldErrors = Record<string, string>;

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(
    message: string,
    readonly fields: FieldErrors = {},
  ) {
    super(400, 'validation', message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Please sign in to continue.') {
    super(401, 'unauthorized', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You do not have permission to do that.') {
    super(403, 'forbidden', message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'We could not find that page.') {
    super(404, 'not_found', message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, 'conflict', message);
  }
}

/** A body larger than the app reads at that address: 413, saying the limit and that nothing was saved. */
export class ContentTooLargeError extends AppError {
  constructor(limitBytes: number) {
    const limit =
      limitBytes >= 1024 * 1024
        ? `${(limitBytes / (1024 * 1024)).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`
        : `${Math.round(limitBytes / 1024)} kB`;
    super(
      413,
      'too_large',
      `The request is too large: at most ${limit} can be sent here, so nothing was saved. Shorten what you sent and send it again.`,
    );
  }
}

/** A body in a form the app does not read (multipart, plain text...): says what to send instead. */
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, 'unsupported_media_type', message);
  }
}

export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, 'rate_limited', message);
  }
}

/** A dependency is down: nothing was done, and the same request may be sent again. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string) {
    super(503, 'unavailable', message);
  }
}

/**
 * Refused for load, not for a fault (searches taking turns, every pooled connection in use): the same
 * 503 for the user, but a warning without a stack for the operator. Under a flood there is one per
 * refused request, and error lines (and the alerts on them) are for faults.
 */
export class BusyError extends ServiceUnavailableError {}

/** A start-up failure that should stop the process with one readable line, no stack trace. */
export class StartupError extends Error {
  override name = 'StartupError';
}
