// An API error as the spec's envelope carries it: an HTTP status, an errorCode, a message. Handlers
// throw these; the request pipeline answers them.

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const bad = (message: string) => new ApiFailure(400, 40001, message);
export const notFound = (what: string) => new ApiFailure(404, 40401, `${what} not found`);
export const conflict = (message: string) => new ApiFailure(409, 40901, message);
export const noQuota = (message: string) => new ApiFailure(402, 40201, message);
