// The function floor: the codebase's exported callable (FUNCTION_TARGET)
// served by node alone, on the port in PORT, as a functions runtime
// serves its one function: express with the body parsers production
// uses, the function at every path. No emulator, no pyric, no worker
// protocol: the least any server that runs the function in node pays,
// firebase-functions' onCall handler included.
const path = require("path");
const http = require("http");
// express as firebase-functions finds it (the harness does the same).
const ffPath = require.resolve("firebase-functions", { paths: [path.join(__dirname, "fn")] });
const express = require(require.resolve("express", { paths: [path.dirname(ffPath)] }));
const fn = require(path.join(__dirname, "fn"))[process.env.FUNCTION_TARGET];
if (typeof fn !== "function") throw new Error(`fn exports no function ${process.env.FUNCTION_TARGET}`);

const app = express();
app.enable("trust proxy");
app.disable("x-powered-by");
const rawBodySaver = (req, res, buf) => {
  req.rawBody = buf;
};
app.use(express.json({ limit: "32mb", verify: rawBodySaver }));
app.use(express.text({ limit: "32mb", verify: rawBodySaver }));
app.use(express.urlencoded({ extended: true, limit: "32mb", verify: rawBodySaver }));
app.use(express.raw({ type: "*/*", limit: "32mb", verify: rawBodySaver }));
app.use((req, res) => fn(req, res));
http.createServer(app).listen(+process.env.PORT, "127.0.0.1");
