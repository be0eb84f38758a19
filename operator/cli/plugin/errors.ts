/** Errors of `kubectl sandbox`: one class, a kind per failing step, always naming the object. */

export type PluginErrorKind = 'NotFound' | 'Malformed' | 'Forbidden' | 'RequestFailed';

export class PluginError extends Error {
  constructor(
    readonly kind: PluginErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PluginError';
  }
}

export const notFound = (kind: string, namespace: string, name: string): PluginError =>
  new PluginError('NotFound', `${kind} ${namespace}/${name} not found`);
