// bench/_forwarder.mjs: the plain JSON-RPC forwarder `proxy.ts` measures the proxy hop against, as a
// user would write and run it: plain JavaScript, `node _forwarder.mjs <upstream url>`, no loader, no
// options. It understands nothing: each request (method, headers, body) goes to the upstream over a
// keep-alive agent and the answer (SSE included) is piped back, so it adds only the second HTTP hop.
// Prints `READY {"url": …}` and stays up until its stdin closes (the bench's peer protocol).
import { Agent, createServer, request } from "node:http";

const target = new URL(process.argv[2] ?? "");
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const headers = { ...req.headers, host: target.host };
  const out = request(
    { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
    (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    },
  );
  out.on("error", () => res.destroy());
  req.pipe(out);
});
server.listen(0, "127.0.0.1", () => {
  console.log(
    `READY ${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}${target.pathname}` })}`,
  );
});
process.stdin.resume();
process.stdin.on("end", () => {
  agent.destroy();
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
