// Drives the support matrix's page in Debian's Chromium with playwright-core for tests/browser.py.
// Usage: node browser_drive.cjs '<json>' with {"url": "file:///…/matrix.html#…", "steps": [step, …]}, a step being
//   {"click": css} | {"hover": css} | {"check": css} | {"uncheck": css} | {"fill": css, "text": "…"}.
// Prints one JSON line: what the page shows once open, then after each step (see `view` below); exits non-zero
// with the reason on failure. Every wait is a condition (the page's script has drawn its rows; a hovered cell's
// tooltip is visible), with limits far above a normal run, for a loaded CI machine.
'use strict';
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const config = JSON.parse(process.argv[2]);
const LIMIT_MS = 120_000;

async function view(page) {
    return page.evaluate(() => ({
        title: document.title,
        heading: document.querySelector('h1') ? document.querySelector('h1').textContent : null,
        legend: [...document.querySelectorAll('.legend li')].map((li) => li.textContent),
        headers: [...document.querySelectorAll('#matrix thead th')].map((th) => ({
            column: th.dataset.column, sort: th.getAttribute('aria-sort'),
        })),
        rows: [...document.querySelectorAll('#matrix tbody tr')].map((tr) => tr.dataset.architecture),
        cells: [...document.querySelectorAll('#matrix td.cell')].map(
            (td) => `${td.closest('tr').dataset.architecture}/${td.dataset.algorithm}=${td.dataset.state}`),
        shown: document.getElementById('shown') ? document.getElementById('shown').textContent : null,
        // the tooltips a person sees now: a hovered or pinned cell's
        tips: [...document.querySelectorAll('#matrix td.cell .tip')]
            .filter((tip) => getComputedStyle(tip).display !== 'none').map((tip) => tip.innerText),
    }));
}

async function step(page, action) {
    if (action.click) await page.click(action.click, { timeout: LIMIT_MS });
    else if (action.hover) {
        await page.hover(action.hover, { timeout: LIMIT_MS });
        await page.locator(`${action.hover} .tip`).waitFor({ state: 'visible', timeout: LIMIT_MS });
    } else if (action.check) await page.check(action.check, { timeout: LIMIT_MS });
    else if (action.uncheck) await page.uncheck(action.uncheck, { timeout: LIMIT_MS });
    else if (action.fill) await page.fill(action.fill, action.text, { timeout: LIMIT_MS });
    else throw new Error(`unknown step ${JSON.stringify(action)}`);
}

(async () => {
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    });
    let failed;
    const seen = [];
    try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
        const errors = [];
        page.on('pageerror', (error) => errors.push(String(error)));
        await page.goto(config.url);
        await page.locator('#shown').filter({ hasText: 'architectures' }).waitFor({ timeout: LIMIT_MS });
        seen.push(await view(page));
        for (const action of config.steps) {
            await step(page, action);
            seen.push(await view(page));
        }
        if (errors.length) throw new Error(`the page's script failed: ${errors.join('; ')}`);
    } catch (error) {
        failed = error;
    } finally {
        await browser.close();
    }
    if (failed) {
        process.stderr.write(`${failed.stack || failed}\n`);
        process.exit(1);
    }
    process.stdout.write(`${JSON.stringify(seen)}\n`);
})();
