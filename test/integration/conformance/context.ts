/**
 * What a conformance scenario works with: its client's hosts (driver processes), fault proxies, gates on the
 * controller's consistent LIST, and names of its own. The suite (conformance.test.ts) makes one per client
 * and scenario and cleans up after it.
 */
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import type { DriverSpec, Host } from './drivers.ts';
import type { Faults } from './fault-proxy.ts';

export type Context = {
  readonly namespace: string;
  readonly client: DriverSpec;
  /** A name of this scenario's own for this client (objects of different clients never meet). */
  name(base: string): string;
  /** A new agent host of the client under test; stopped after the scenario (restart: stop it, take another). */
  host(): Host;
  /** A fault proxy in front of the API server: the path of its kubeconfig, for a request's `kubeconfig`. */
  proxy(faults: Faults): Promise<string>;
  /** Holds the controller's consistent LIST of the sandbox's references, before or after it runs. */
  gate(sandbox: string, when: 'BeforeList' | 'AfterList'): Gate;
};

export type Scenario = { readonly name: string; run(context: Context): Promise<void> };

export class Gate {
  private entered: () => void = () => undefined;
  private released: () => void = () => undefined;
  /** Resolves when the controller arrives at the gate. */
  readonly reached = new Promise<void>((resolve) => (this.entered = resolve));
  private readonly opened = new Promise<void>((resolve) => (this.released = resolve));
  constructor(readonly when: 'BeforeList' | 'AfterList') {}
  async pass(): Promise<void> {
    this.entered();
    await this.opened;
  }
  open(): void {
    this.released();
  }
}

/** The controller's ports with every registered gate in front of (or behind) its consistent LIST. */
export function gated(gates: ReadonlyMap<string, Gate>): (ports: ControllerPorts) => ControllerPorts {
  return (ports) => ({
    ...ports,
    references: {
      ...ports.references,
      listLive: async (namespace, sandbox) => {
        const gate = gates.get(sandbox);
        if (gate?.when === 'BeforeList') await gate.pass();
        const live = await ports.references.listLive(namespace, sandbox);
        if (gate?.when === 'AfterList') await gate.pass();
        return live;
      },
    },
  });
}

/** The request's path, without its query. */
export const pathOf = (url: string) => new URL(url, 'http://proxy').pathname;
