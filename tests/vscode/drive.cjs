// Drives code-server in Debian's Chromium with playwright-core for tests/vscode/test_vscode.py.
// Usage: node drive.cjs '<json>' with {"mode": "api" | "ui" | "ui-contract", "url", "shots", "report"?, "file"?,
//   "explorer"? (the Explorer rows the ui mode clicks down to the file; default minisgl, models, llava.py),
//   "name"? (the ui mode's screenshot prefix; default ui)}.
//   api: opens the workspace (which starts the extension host and so the test build's hook, hook/) and waits
//        for the hook's report file;
//   ui:  does what a person would: opens llava.py from the Explorer, waits for the squiggle, hovers it,
//        Ctrl+. and Enter on the delegation quick fix, Ctrl+S, and waits for the fix on disk;
//   ui-contract: runs "spec-contract: Show Contract" from the command palette and clicks the worker call
//        site in the view, which opens the worker file;
//   ui-matrix: runs "spec-contract: Show support matrix" from the command palette and reads the matrix page's
//        cells and content security policy in the webview it opens;
//   ui-untrusted-matrix: runs the same command and reports what came: the matrix tab, or a notification
//        ("toast": a text it holds);
//   ui-missing-package: waits for a notification about the interpreter ("toast": a text it holds);
//   docs: opens llava.py as ui does, the Problems panel and the squiggle's hover, and takes docs.png (for
//        docs/screenshots.py; "viewport": {"width", "height"} sets the page's size, default 1400 x 900).
// Prints one JSON line with what it saw; exits non-zero with the reason on failure (after a screenshot).
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const config = JSON.parse(process.argv[2]);
const FIX = 'Add delegation of `get_embed_and_head` to `self.language_model`';
const seen = {};
// Every wait is a condition. The limits are far above a normal run (a step takes a second or two) so that a
// loaded CI machine only makes the test slower, never red; steps that can race the UI (a key press before the
// workbench listens, a click before a view is ready) are retried, each try waiting ATTEMPT_MS.
const START_MS = 300_000; // code-server's first page, the extension host and the server's first analysis
const STEP_MS = 120_000; // any later step
const ATTEMPT_MS = 5_000; // one try of a retried step
const HOOK_MS = 600_000; // the extension's test hook: its own steps wait up to 240 + 2 x 120 s

async function waitUntil(what, timeoutMs, probe) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
}

async function shot(page, name) {
    const file = path.join(config.shots, name);
    await page.screenshot({ path: file });
    (seen.screenshots = seen.screenshots || []).push(file);
}

async function api(page) {
    await page.goto(config.url);
    await waitUntil('the test hook report', HOOK_MS, () => fs.existsSync(config.report));
    // The hook has opened the contract view; let it render before the picture (which is all that waits on it).
    await callSiteRow(page).waitFor({ timeout: STEP_MS }).catch(() => {});
    await shot(page, 'api-after-fix.png');
}

function callSiteRow(page) {
    return page.locator('[id="workbench.view.extension.spec-contract"] .monaco-list-row', { hasText: 'eagle_worker.py:11' }).first();
}

async function explorerItem(page, name) {
    return page.locator('.explorer-folders-view .monaco-list-row', {
        has: page.locator('.label-name', { hasText: new RegExp(`^${name.replace('.', '\\.')}$`) }),
    });
}

// Opens the file from the Explorer as a person would; returns its first error squiggle, once drawn.
async function openFromExplorer(page) {
    await page.goto(config.url);
    for (const name of config.explorer || ['minisgl', 'models', 'llava.py']) {
        const row = await explorerItem(page, name);
        await row.waitFor({ timeout: START_MS });
        await row.click();
    }
    const squiggle = page.locator('.monaco-editor .squiggly-error').first();
    await squiggle.waitFor({ timeout: START_MS });
    return squiggle;
}

// Moves onto the squiggle (away and back if the first move raced the editor's layout); returns the hover's text.
async function hoverOver(page, squiggle) {
    const hover = page.locator('.monaco-hover:visible', { hasText: 'eagle_worker.py' });
    return waitUntil('the hover with the worker call site', STEP_MS, async () => {
        const box = await squiggle.boundingBox();
        await page.mouse.move(5, 5);
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        try {
            await hover.first().waitFor({ timeout: ATTEMPT_MS });
            return await hover.first().innerText();
        } catch {
            return undefined;
        }
    });
}

async function ui(page) {
    const squiggle = await openFromExplorer(page);
    await shot(page, `${config.name || 'ui'}-1-squiggle.png`);
    seen.hover = await hoverOver(page, squiggle);
    await shot(page, `${config.name || 'ui'}-2-hover.png`);
    await page.keyboard.press('Escape');

    // Quick fix: put the cursor on the class name, Ctrl+. (again if the first raced the code-action request).
    const box = await squiggle.boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const menuRows = page.locator('.action-widget .monaco-list-row');
    seen.quickFixes = await waitUntil('the quick fix menu', STEP_MS, async () => {
        await page.keyboard.press('Control+Period');
        try {
            await menuRows.filter({ hasText: 'get_embed_and_head' }).first().waitFor({ timeout: ATTEMPT_MS });
            return await menuRows.allInnerTexts();
        } catch {
            await page.keyboard.press('Escape');
            return undefined;
        }
    });
    await shot(page, `${config.name || 'ui'}-3-quick-fix.png`);
    // Enter applies the focused entry; walk down to ours as a person would if it is not the first.
    for (let i = 0; i < seen.quickFixes.length; i++) {
        const focused = await page.locator('.action-widget .monaco-list-row.focused').innerText().catch(() => '');
        if (focused.includes('get_embed_and_head') && focused.includes('Add delegation')) break;
        await page.keyboard.press('ArrowDown');
    }
    seen.chosen = await page.locator('.action-widget .monaco-list-row.focused').innerText();
    await page.keyboard.press('Enter');
    await waitUntil('the delegation in the editor', STEP_MS, async () =>
        (await page.locator('.monaco-editor .view-lines').first().innerText()).includes('get_embed_and_head'));
    // Ctrl+S, again if the first came while the editor was still taking the edit.
    seen.fileOnDisk = await waitUntil('the delegation on disk', STEP_MS, async () => {
        await page.locator('.monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+S');
        return waitUntil('the save', ATTEMPT_MS, () => {
            const text = fs.readFileSync(config.file, 'utf8');
            return text.includes('def get_embed_and_head') ? text : undefined;
        }).catch(() => undefined);
    });
    await shot(page, `${config.name || 'ui'}-4-saved.png`);
    // Every notification so far, from the notification center (toasts hide themselves after a while).
    const center = page.locator('.notifications-center');
    await waitUntil('the notification center', STEP_MS, async () => {
        if (await center.isVisible()) return true;
        await page.locator('[id="status.notifications"]').click();
        return center.waitFor({ timeout: ATTEMPT_MS }).then(() => true, () => false);
    });
    seen.notifications = await center.locator('.notification-list-item-message').allInnerTexts();
    await page.keyboard.press('Escape');
}

async function runCommand(page, title) {
    // The palette: F1 can come before the workbench listens, and the command before the extension registered
    // it; each try starts from a closed palette.
    const command = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    await waitUntil(`"spec-contract: ${title}" in the command palette`, STEP_MS, async () => {
        await page.keyboard.press('Escape');
        await page.keyboard.press('F1');
        try {
            const input = page.locator('.quick-input-widget input').first();
            await input.waitFor({ timeout: ATTEMPT_MS });
            await input.fill(`>spec-contract: ${title}`);
            await command.waitFor({ timeout: ATTEMPT_MS });
            return true;
        } catch {
            return false;
        }
    });
    await page.keyboard.press('Enter');
}

async function uiMatrix(page) {
    await page.goto(config.url);
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: START_MS });
    await runCommand(page, 'Show support matrix');
    const tab = page.locator('.tab', { hasText: 'spec-contract: support matrix' }).first();
    await tab.waitFor({ timeout: STEP_MS });
    seen.tab = await tab.textContent();
    // The page runs in the webview's nested frames: find the one whose script drew the cells.
    seen.cells = await waitUntil('the matrix cells in the webview', STEP_MS, async () => {
        for (const frame of page.frames()) {
            const cells = await frame.locator('td.cell').evaluateAll(
                (tds) => tds.map((td) => `${td.closest('tr').dataset.architecture}/${td.dataset.algorithm}=${td.dataset.state}`),
            ).catch(() => []);
            if (cells.length) {
                seen.policy = await frame.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
                return cells;
            }
        }
        return undefined;
    });
    await shot(page, 'ui-6-matrix.png');
}

async function uiUntrustedMatrix(page) {
    await page.goto(config.url);
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: START_MS });
    await runCommand(page, 'Show support matrix');
    const tab = page.locator('.tab', { hasText: 'spec-contract: support matrix' }).first();
    const item = page.locator('.notification-list-item:visible', { hasText: config.toast }).first();
    const outcome = await waitUntil('the matrix tab or the notification', STEP_MS, async () =>
        (await tab.isVisible()) ? 'tab' : (await item.isVisible()) ? 'notification' : undefined);
    seen.tab = outcome === 'tab';
    if (outcome === 'notification') {
        seen.notification = await item.locator('.notification-list-item-message').innerText();
        seen.buttons = await item.locator('.monaco-button').allInnerTexts();
    }
    await shot(page, 'ui-untrusted-matrix.png');
}

async function uiContract(page) {
    await page.goto(config.url);
    await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: START_MS });
    await runCommand(page, 'Show Contract');
    const site = callSiteRow(page);
    await site.waitFor({ timeout: STEP_MS });
    seen.contractRows = await page.locator('[id="workbench.view.extension.spec-contract"] .monaco-list-row').allInnerTexts();
    const workerTab = page.locator('.tab.active', { hasText: 'eagle_worker.py' });
    seen.activeTab = await waitUntil('the worker file opened from its call site', STEP_MS, async () => {
        await site.click();
        return workerTab.waitFor({ timeout: ATTEMPT_MS }).then(() => workerTab.first().textContent(), () => undefined);
    });
    await shot(page, 'ui-5-contract.png');
}

async function uiMissingPackage(page) {
    await page.goto(config.url);
    // A toast, or (once it has hidden itself) the same notification in the notification center.
    const item = page.locator('.notification-list-item:visible', { hasText: config.toast }).first();
    await waitUntil(`a notification saying "${config.toast}"`, START_MS, async () => {
        if (await item.isVisible()) return true;
        if (!(await page.locator('.notifications-center').isVisible())) {
            await page.locator('[id="status.notifications"]').click().catch(() => {});
        }
        return item.waitFor({ timeout: ATTEMPT_MS }).then(() => true, () => false);
    });
    seen.notification = await item.locator('.notification-list-item-message').innerText();
    seen.buttons = await item.locator('.monaco-button').allInnerTexts();
    const status = page.locator('.statusbar-item', { hasText: 'spec-contract' }).first();
    seen.statusIcon = await status.locator('.codicon').first().getAttribute('class');
    await shot(page, 'ui-missing-package.png');
}

async function docs(page) {
    const squiggle = await openFromExplorer(page);
    // The Problems panel (Ctrl+Shift+M, again if the first came before the workbench listened), with our rows.
    const problems = page.locator('.markers-panel .monaco-list-row', { hasText: 'get_embed_and_head' }).first();
    seen.problems = await waitUntil('the Problems panel', STEP_MS, async () => {
        if (!(await problems.isVisible())) await page.keyboard.press('Control+Shift+M');
        return problems.waitFor({ timeout: ATTEMPT_MS }).then(
            () => page.locator('.markers-panel .monaco-list-row').allInnerTexts(), () => undefined);
    });
    seen.hover = await hoverOver(page, squiggle);
    await shot(page, 'docs.png');
}

const MODES = {
    api, ui, docs, 'ui-contract': uiContract, 'ui-matrix': uiMatrix, 'ui-untrusted-matrix': uiUntrustedMatrix,
    'ui-missing-package': uiMissingPackage,
};

(async () => {
    fs.mkdirSync(config.shots, { recursive: true });
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
            '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: config.viewport || { width: 1400, height: 900 } });
    let failed;
    try {
        await MODES[config.mode](page);
    } catch (error) {
        failed = error;
        await shot(page, `${config.mode}-failure.png`).catch(() => {});
    } finally {
        await browser.close();
    }
    process.stdout.write(JSON.stringify(seen) + '\n');
    if (failed) {
        process.stderr.write(`${failed.stack || failed}\n`);
        process.exit(1);
    }
})();
