import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of the file server, through which the browser talks to it, so a
 * test can act on the wire of tus `PATCH` bodies without touching the page: cut the connection after
 * a number of body bytes (a drop mid-upload), hold the bodies until the test releases them, or let
 * them through at a fixed rate.
 */
export interface TusProxy {
  /** `http://127.0.0.1:{port}`: open pages through this origin. */
  origin: string;
  /**
   * Cuts the next connection that carries a `PATCH` after `bytes` bytes of it; resolves when cut.
   * With `refuse`, new connections are refused from then on (until `refuseConnections(false)`).
   */
  cutAfter(bytes: number, options?: { refuse?: boolean }): Promise<void>;
  /** Refuses new connections while set (the server cannot be reached). */
  refuseConnections(refuse: boolean): void;
  /** Holds every `PATCH` connection's bytes until {@link release}; resolves once bytes are held. */
  hold(): Promise<void>;
  /** Lets held bytes through. */
  release(): void;
  /** Bytes per second for `PATCH` connections; `undefined` = no limit. */
  throttle(bytesPerSecond: number | undefined): void;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`http://127.0.0.1:{port}`). */
export async function startTusProxy(target: string): Promise<TusProxy> {
  const port = Number(new URL(target).port);
  const sockets = new Set<Socket>();
  let cut: { at: number; refuse: boolean; done: () => void } | undefined;
  let refuse = false;
  let gate: { promise: Promise<void>; open: () => void; held: () => void } | undefined;
  let heldSeen: Promise<void> = Promise.resolve();
  let rate: number | undefined;

  const server: Server = createServer((client) => {
    if (refuse) {
      client.destroy();
      return;
    }
    const upstream = connect(port, "127.0.0.1");
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    upstream.pipe(client);
    let patching = false;
    let patchBytes = 0;
    let mine: typeof cut;
    client.on("data", (chunk: Buffer) => {
      if (/^(PATCH|POST|HEAD|GET|OPTIONS|DELETE|PUT) /.test(chunk.subarray(0, 8).toString("latin1"))) {
        patching = chunk.subarray(0, 6).toString("latin1") === "PATCH ";
        patchBytes = 0; // counted per request: a kept-alive connection carries several
        if (patching && cut && !mine) {
          mine = cut;
          cut = undefined;
        }
      }
      if (!patching) {
        upstream.write(chunk);
        return;
      }
      client.pause();
      void (async () => {
        if (gate) {
          gate.held();
          await gate.promise;
        }
        if (mine && patchBytes + chunk.length >= mine.at) {
          const rest = chunk.subarray(0, mine.at - patchBytes);
          const done = mine.done;
          upstream.write(rest, () => {
            // Idle connections the browser keeps (or opened ahead) go too: nothing gets through.
            if (mine?.refuse) {
              refuse = true;
              for (const socket of sockets) if (socket !== client && socket !== upstream) socket.destroy();
            }
            // Let the server read what arrived before the connection goes.
            setImmediate(() => {
              end();
              done();
            });
          });
          return;
        }
        patchBytes += chunk.length;
        upstream.write(chunk, () => {
          const wait = rate ? (chunk.length / rate) * 1000 : 0;
          setTimeout(() => client.resume(), wait);
        });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    origin,
    cutAfter: (bytes, options = {}) =>
      new Promise<void>((done) => {
        cut = { at: bytes, refuse: options.refuse ?? false, done };
      }),
    refuseConnections: (value) => {
      refuse = value;
      if (value) for (const socket of sockets) socket.destroy();
    },
    hold: () => {
      let open = () => {};
      let held = () => {};
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      heldSeen = new Promise<void>((resolve) => {
        held = resolve;
      });
      gate = { promise, open, held };
      return heldSeen;
    },
    release: () => {
      const current = gate;
      gate = undefined;
      current?.open();
    },
    throttle: (value) => {
      rate = value;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
