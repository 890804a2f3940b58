/**
 * Entry point of the extension's test build: the shipped extension (vscode-client/src/extension.ts) plus the
 * end-to-end test hook. tests/vscode/vscode_harness.py bundles it with the shipped build's own esbuild flags
 * and swaps it for dist/extension.js in a copy of the packaged .vsix, so code-server runs exactly the shipped
 * extension with the hook on top, while the .vsix users install never contains the hook.
 */
import type * as vscode from 'vscode';
import { deactivate, wire } from '../../../vscode-client/src/extension';
import { runTestHook } from './testHook';

export { deactivate };

export function activate(context: vscode.ExtensionContext): void {
    const { contract, status } = wire(context);
    const reportPath = process.env.SPEC_CONTRACT_TEST_REPORT;
    if (reportPath) {
        void runTestHook(reportPath, contract, status);
    }
}
