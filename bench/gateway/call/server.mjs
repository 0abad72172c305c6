// One side of bench/gateway/call/run.mjs: a server answering one unary method at once with a 300-byte message,
// made with @grpc/grpc-js (`grpc`) or with node's http2 module and gRPC's framing by hand (`http2`). It reports its
// own CPU (µs, user + system) since the last report whenever the parent asks over IPC.
import http2 from 'node:http2';
import { frame, grpc, method } from './wire.mjs';

const kind = process.argv[2];
const answer = Buffer.alloc(300, 7);

function ready(port) {
  process.send({ port });
}

if (kind === 'grpc') {
  const server = new grpc.Server();
  server.addService({ Get: method }, { Get: (_call, cb) => cb(null, answer) });
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? process.exit(1) : ready(port)));
} else {
  const server = http2.createServer();
  server.on('stream', (stream) => {
    stream.on('data', () => {});
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame(answer));
    });
  });
  server.listen(0, '127.0.0.1', () => ready(server.address().port));
}
let last = process.cpuUsage();
process.on('message', () => {
  const used = process.cpuUsage(last);
  last = process.cpuUsage();
  process.send({ cpu: used.user + used.system });
});
// The parent gone (a bench stopped half-way): nothing is left listening.
process.on('disconnect', () => process.exit(0));
