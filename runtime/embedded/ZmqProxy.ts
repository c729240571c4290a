/**
 * The XSUB/XPUB forwarder that connects embedded runtimes in different processes.
 * Bridges connect their PUB socket to `xsubEndpoint` and their SUB socket to `xpubEndpoint`;
 * subscriptions flow upstream through the proxy, so only wanted topics cross the wire.
 */
import * as zmq from "zeromq";
import { checkListenAddress } from "../listenAddress.ts";

/** Where the proxy binds (default tcp://127.0.0.1 on free ports). */
export interface ZmqProxyOptions {
  xsub?: string;
  xpub?: string;
  /**
   * The proxy has no authentication (no CURVE on the topic bus): an address beyond loopback is refused unless this is
   * set, for a network you trust (docs/security.md §3).
   */
  insecurePublicBind?: boolean;
}

export class ZmqProxy {
  #proxy: zmq.Proxy<zmq.XSubscriber, zmq.XPublisher>;
  #done: Promise<void>;

  private constructor(
    proxy: zmq.Proxy<zmq.XSubscriber, zmq.XPublisher>,
    readonly xsubEndpoint: string,
    readonly xpubEndpoint: string,
  ) {
    this.#proxy = proxy;
    this.#done = proxy.run();
  }

  /** Binds both sockets and starts forwarding. */
  static async start(opts: ZmqProxyOptions = {}): Promise<ZmqProxy> {
    const xsub = opts.xsub ?? "tcp://127.0.0.1:*";
    const xpub = opts.xpub ?? "tcp://127.0.0.1:*";
    for (const [setting, address] of [["xsub", xsub], ["xpub", xpub]] as const) {
      checkListenAddress({ setting: `the ZeroMQ topic proxy's ${setting}`, address, authenticated: false, risk: "publish on the robot's topics (joint commands included) and read them", insecurePublicBind: opts.insecurePublicBind ?? false });
    }
    const front = new zmq.XSubscriber();
    const back = new zmq.XPublisher();
    try {
      await front.bind(xsub);
      await back.bind(xpub);
    } catch (err) {
      front.close();
      back.close();
      throw new Error(`ZmqProxy cannot bind ${xsub} / ${xpub}: ${(err as Error).message} (is another proxy running there?)`, { cause: err });
    }
    return new ZmqProxy(new zmq.Proxy(front, back), front.lastEndpoint ?? xsub, back.lastEndpoint ?? xpub);
  }

  /** Stops forwarding and closes both sockets. */
  async close(): Promise<void> {
    this.#proxy.terminate();
    await this.#done;
  }
}
