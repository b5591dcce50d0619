// A webhook receiver for trying payd: it checks every delivery with the
// official Standard Webhooks library (the same check a merchant's code makes)
// and answers 204 only when the signature and timestamp verify, so payd's
// delivery log shows a failure for any delivery the library refuses.
//
//   WEBHOOK_SECRET=whsec_… node receiver.mjs [PORT]
//
// One line per delivery goes to standard output:
//   verified <webhook-id> <event type>
//   refused <webhook-id> <reason>
import http from "node:http";
import { Webhook } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("receiver: set WEBHOOK_SECRET to the endpoint's whsec_… secret");
  process.exit(2);
}
const port = Number(process.argv[2] ?? 4000);
const verifier = new Webhook(secret);

http
  .createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const id = req.headers["webhook-id"] ?? "-";
      try {
        const event = verifier.verify(body, req.headers);
        console.log(`verified ${id} ${event.type}`);
        res.writeHead(204).end();
      } catch (err) {
        console.log(`refused ${id} ${err.message}`);
        res.writeHead(400).end();
      }
    });
  })
  .listen(port, "127.0.0.1", () => console.error(`receiver: listening on 127.0.0.1:${port}`));
