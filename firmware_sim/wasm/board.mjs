// The reader board firmware under MicroPython's WebAssembly port, on Node.
// stdin/stdout: the board's USB serial link (raw protocol bytes).
// CONTROL_FD (optional): control lines from the test ("place seat1 04A1...", "remove ...",
// "drop ..." (no scan: the schedule finds it), "focused", "cut", "restart", "uptime"), each
// answered by a line on stderr ("ctl: ok").
// Usage: node board.mjs REPO_ROOT ANTENNAS KIND HEARTBEAT_MS INVENTORY_MS [CONTROL_FD]
// or:    node board.mjs REPO_ROOT --run SCRIPT.py   (runs a script with the firmware importable)
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import fs from "fs";
import net from "net";
import path from "path";

const [root, ...args] = process.argv.slice(2);
const mp = await loadMicroPython({
  heapsize: 16 * 1024 * 1024,
  stdout: (data) => process.stderr.write(data),
  linebuffer: false,
});

function copyModules(dir, files) {
  mp.FS.mkdir("/" + dir);
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, dir, file), "utf8");
    mp.FS.writeFile("/" + dir + "/" + path.basename(file), text);
  }
}
copyModules("firmware", ["__init__.py", "protocol.py", "hal.py", "pn5180.py", "scanner.py",
                         "board.py", "clock.py"]);
copyModules("firmware_sim", ["pn5180_sim.py", "modelled.py", "wasm/harness.py"]);
mp.FS.writeFile("/firmware_sim/__init__.py", "");
mp.runPython("import sys\nsys.path.insert(0, '/')\n");

if (args[0] === "--run") {
  try {
    mp.runPython(fs.readFileSync(args[1], "utf8"));
  } catch (error) {
    process.stderr.write(`python error: ${error.type}: ${error.message}\n`);
    process.exit(1);
  }
  process.exit(0);
}

let incoming = Buffer.alloc(0);
mp.registerJsModule("hostio", {
  read: () => {
    if (incoming.length === 0) return "";
    const text = incoming.toString("hex");
    incoming = Buffer.alloc(0);
    return text;
  },
  write: (hex) => {
    process.stdout.write(Buffer.from(hex, "hex"));
    return hex.length / 2;
  },
});
let harness;
try {
  harness = mp.pyimport("firmware_sim.harness");
} catch (error) {
  process.stderr.write(`python error: ${error.type}: ${error.message}\n`);
  process.exit(1);
}
const [antennas, kind, heartbeat, inventory, controlFd] = args;
harness.start(antennas, kind, parseInt(heartbeat, 10), parseInt(inventory, 10));

let stopping = false;
process.stdin.on("data", (chunk) => { incoming = Buffer.concat([incoming, chunk]); });
process.stdin.on("end", () => { stopping = true; });

if (controlFd !== undefined) {
  const control = new net.Socket({ fd: parseInt(controlFd, 10), readable: true, writable: false });
  let pending = "";
  control.on("data", (chunk) => {
    pending += chunk.toString();
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      process.stderr.write(`ctl: ${harness.command(line)}\n`);
    }
  });
  control.on("end", () => { stopping = true; });
}

function tick() {
  if (stopping) process.exit(0);
  let wait = 0;
  try {
    wait = harness.step();
  } catch (error) {
    process.stderr.write(`python error: ${error.type}: ${error.message}\n`);
    process.exit(1);
  }
  setTimeout(tick, Math.max(1, Math.min(wait, 5)));
}
tick();
