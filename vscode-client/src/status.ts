/**
 * The status bar item: server state, indexing progress (from the server's `$/progress` work-done reports) and
 * the number of spec-contract findings in the workspace.
 */
import * as vscode from 'vscode';
import type { WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport } from 'vscode-languageclient/node';
import type { ServerStateEvent } from './server';

export const DIAGNOSTIC_SOURCE = 'spec-contract';

/** Each severity's icon and word, in the order of `vscode.DiagnosticSeverity` (Error = 0, the worst). */
const SEVERITIES = [
    { icon: '$(error)', word: 'error' },
    { icon: '$(warning)', word: 'warning' },
    { icon: '$(info)', word: 'information' },
    { icon: '$(lightbulb)', word: 'hint' },
];

/** spec-contract's findings in the workspace, counted per severity (indexed by `vscode.DiagnosticSeverity`). */
export function countFindings(): number[] {
    const counts = SEVERITIES.map(() => 0);
    for (const [, diagnostics] of vscode.languages.getDiagnostics()) {
        for (const diagnostic of diagnostics) {
            if (diagnostic.source === DIAGNOSTIC_SOURCE) {
                counts[diagnostic.severity] += 1;
            }
        }
    }
    return counts;
}

export class StatusIndicator implements vscode.Disposable {
    private readonly item = vscode.window.createStatusBarItem('specContract.status', vscode.StatusBarAlignment.Left, 10);
    private readonly diagnosticsListener: vscode.Disposable;
    private server: ServerStateEvent = { state: 'stopped' };
    private indexing: { message?: string; percentage?: number } | undefined;
    /** Until the first results arrive after a start, the server is taken to be indexing. */
    private awaitingResults = false;

    constructor() {
        this.item.name = 'spec-contract';
        this.diagnosticsListener = vscode.languages.onDidChangeDiagnostics(() => {
            this.awaitingResults = false;
            this.render();
        });
        this.render();
        this.item.show();
    }

    get text(): string {
        return this.item.text;
    }

    setServerState(event: ServerStateEvent): void {
        if (event.state === 'running' && this.server.state !== 'running') {
            this.awaitingResults = true;
        }
        if (event.state !== 'running') {
            this.indexing = undefined;
        }
        this.server = event;
        this.render();
    }

    progress(params: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd): void {
        if (params.kind === 'end') {
            this.indexing = undefined;
            this.awaitingResults = false;
        } else {
            this.indexing = {
                message: params.message ?? this.indexing?.message,
                percentage: params.percentage ?? this.indexing?.percentage,
            };
        }
        this.render();
    }

    dispose(): void {
        this.diagnosticsListener.dispose();
        this.item.dispose();
    }

    private render(): void {
        const item = this.item;
        item.backgroundColor = undefined;
        item.command = 'specContract.showOutput';
        const detail = this.server.detail ? `\n\n${this.server.detail}` : '';
        switch (this.server.state) {
            case 'disabled':
                item.text = '$(circle-slash) spec-contract';
                item.tooltip = `spec-contract is disabled${detail}`;
                return;
            case 'restricted':
                item.text = '$(shield) spec-contract';
                item.tooltip = 'spec-contract: not started in an untrusted workspace. Click to start it anyway.';
                item.command = 'specContract.startUntrusted';
                return;
            case 'failed':
                item.text = '$(error) spec-contract';
                item.tooltip = `spec-contract: the server is not running${detail}`;
                item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
                return;
            case 'stopped':
                item.text = '$(debug-stop) spec-contract';
                item.tooltip = `spec-contract: stopped${detail}`;
                return;
            case 'starting':
                item.text = '$(loading~spin) spec-contract: starting…';
                item.tooltip = 'spec-contract: starting the language server';
                return;
            case 'running':
                break;
        }
        if (this.indexing || this.awaitingResults) {
            const percentage = this.indexing?.percentage !== undefined ? ` ${Math.round(this.indexing.percentage)}%` : '';
            item.text = `$(loading~spin) spec-contract: indexing…${percentage}`;
            item.tooltip = `spec-contract: ${this.indexing?.message ?? 'indexing the workspace'}`;
            return;
        }
        // The icon is the worst finding's severity: an error icon when there is an error, and so on.
        const counts = countFindings();
        const findings = counts.reduce((sum, count) => sum + count, 0);
        const worst = counts.findIndex((count) => count > 0);
        const plural = (count: number, word: string) => `${count} ${word}${count === 1 || word === 'information' ? '' : 's'}`;
        item.text = findings === 0 ? '$(check) spec-contract' : `${SEVERITIES[worst].icon} spec-contract: ${plural(findings, 'finding')}`;
        const bySeverity = SEVERITIES.flatMap(({ word }, severity) => (counts[severity] ? [plural(counts[severity], word)] : []));
        item.tooltip = findings === 0
            ? 'spec-contract: no wrapper findings in the workspace'
            : `spec-contract: ${plural(findings, 'wrapper finding')} in the workspace (${bySeverity.join(', ')})`;
    }
}
