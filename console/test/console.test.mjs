// Browser test of the console, in Debian's Chromium driven by playwright-core
// (no browser download). It starts the single command itself (DEV_BINARY,
// as .ci/run builds it) so that it can kill and restart it: it runs the trip
// playbook from the page, kills the stack (SIGKILL) while the trip waits for
// the flight agent's answer, sees the page say so, restarts the stack on the
// same data, answers where the question is shown, and watches the graph
// reach COMPLETED.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { chromium } from "playwright-core";

const bin = process.env.DEV_BINARY;
const port = process.env.CONSOLE_PORT || "18080";
const base = `http://127.0.0.1:${port}`;
const out = new URL("./output/", import.meta.url).pathname;
const data = mkdtempSync(join(tmpdir(), "console-test-"));

function startStack() {
  const p = spawn(bin, ["-addr", `127.0.0.1:${port}`, "-grpc-addr", "", "-temporal-port", process.env.TEMPORAL_PORT || "18233",
    "-agent-port", "0", "-metrics-addr", "", "-data-dir", data], { stdio: "ignore" });
  return p;
}

async function ready() {
  for (let i = 0; i < 300; i++) {
    try {
      const r = await fetch(base + "/readyz");
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("the stack did not become ready");
}

test("trip from the console, across a restart of the stack", { timeout: 180_000 }, async () => {
  assert.ok(bin, "DEV_BINARY is not set");
  mkdirSync(out, { recursive: true });
  let stack = startStack();
  await ready();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    await page.goto(base + "/console/");
    await page.selectOption("#mode", "trip");
    await page.fill("#input", "a trip to Rovaniemi");
    await page.click("#send");

    // The trip waits for the flight agent's question, shown on the trip task.
    await page.waitForSelector("#question.question", { timeout: 30_000 });
    assert.match(await page.textContent("#question"), /\[flight via flight\]/);
    assert.ok(await page.locator(".node").count() >= 2, "the graph shows the trip and its flight node");

    // The stack dies: the page says it lost the connection...
    stack.kill("SIGKILL");
    await page.waitForSelector("#conn.down", { timeout: 20_000 });
    // ...and carries on when the stack is back, from where it was.
    stack = startStack();
    await ready();
    await page.waitForSelector("#conn.ok", { timeout: 20_000 });

    await page.fill("#answer", "from Helsinki on 2027-02-02");
    // The pane is redrawn on every update (every 2 s at least): what was
    // typed survives the redraw.
    await page.evaluate(() => { document.getElementById("answer").dataset.before = "1"; });
    await page.waitForFunction(() => {
      const a = document.getElementById("answer");
      return a && !a.dataset.before;
    }, null, { timeout: 10_000 });
    assert.equal(await page.inputValue("#answer"), "from Helsinki on 2027-02-02");
    await page.click("#answerbtn");

    // Five tasks (the trip and its four nodes), all COMPLETED, edges drawn.
    await page.waitForFunction(() => {
      const nodes = [...document.querySelectorAll(".node")];
      return nodes.length === 5 && nodes.every((n) => n.dataset.state === "TASK_STATE_COMPLETED");
    }, null, { timeout: 60_000 });
    assert.ok(await page.locator(".edge").count() >= 3, "edges from referenceTaskIds");
    const labels = await page.locator(".node").evaluateAll((ns) => ns.map((n) => n.dataset.label));
    for (const want of ["flight (flight)", "hotel (hotel)", "snowmobile (snowmobile)", "spa (spa)"]) {
      assert.ok(labels.includes(want), `node ${want} in ${labels}`);
    }
    // The trip's summary artifact, shown in the task pane.
    await page.click('.node[data-label="trip"]');
    await page.waitForSelector("text=plan-summary");
    await page.screenshot({ path: out + "console.png", fullPage: true });
  } finally {
    await browser.close();
    stack.kill("SIGKILL");
  }
});
