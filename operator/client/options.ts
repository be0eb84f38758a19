/** What a host may choose about the client. */
export type ClientOptions = {
  /**
   * The User-Agent of every request, which audit logs record: name your host (e.g. `my-platform/1.4`). The
   * default names this client, never the operator, so its writes are not taken for the operator's.
   */
  readonly userAgent?: string;
};

export const CLIENT_USER_AGENT = 'sandbox-operator-client';
