// The node floor: node's own HTTP server answering the callable's bytes
// and doing nothing else, on the port in PORT. No server that runs the
// function in node answers faster than this through the same client.
const http = require("http");
const answer = Buffer.from(process.env.ANSWER);
http
  .createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": answer.length });
      res.end(answer);
    });
  })
  .listen(+process.env.PORT, "127.0.0.1");
