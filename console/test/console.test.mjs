// Browser test of the console, in Debian's Chromium driven by playwright-core
// (no browser download). It needs a running stack: CONSOLE_URL, as .ci/run
// sets it. It runs the trip playbook from the page, answers the flight
// agent's question where it is shown, and watches the graph reach COMPLETED.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

const base = process.env.CONSOLE_URL;
const out = new URL("./output/", import.meta.url).pathname;

test("trip from the console", { timeout: 120_000 }, async () => {
  assert.ok(base, "CONSOLE_URL is not set");
  mkdirSync(out, { recursive: true });
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
    await page.waitForSelector('#question.question', { timeout: 30_000 });
    assert.match(await page.textContent("#question"), /\[flight via flight\]/);
    assert.equal(await page.locator(".node").count() >= 2, true, "the graph shows the trip and its flight node");

    await page.fill("#answer", "from Helsinki on 2027-02-02");
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
  }
});
