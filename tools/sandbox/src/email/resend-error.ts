/** An error answered in Resend's shape, `{ statusCode, message, name }`. */
export class ResendApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }

  toBody(): { statusCode: number; message: string; name: string } {
    return { statusCode: this.statusCode, message: this.message, name: this.errorName };
  }
}
