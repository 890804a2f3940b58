/**
 * "spec-contract: Show support matrix": the engine's every architecture × algorithm in a webview.
 *
 * The page is `spec-contract matrix --format html`, run with the same interpreter and server as the language server (`-I`, in this
 * extension's directory: nothing of the workspace is imported) and read from its standard output, so no file
 * is written. The tree is the workspace folder (`--engine`: an engine checkout, or a package of one's own
 * models, which takes its contract from the interpreter's engine); when that gives no matrix, the engine
 * installed for the interpreter (`--python`); when neither does, the message offers to pick the engine's folder. The page is self-contained and its content security
 * policy lets it load nothing and run only its own script (filters, search, tooltips), which carries the page's nonce.
 *
 * Like the language server, the command runs nothing in an untrusted workspace (the interpreter may be the
 * workspace's choice) unless the user agreed to start the server there.
 */
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { commandLine, resolveInterpreter } from './python';
import { primaryFolder, readStartSettings, SECTION } from './settings';

export const SHOW_MATRIX = 'specContract.showSupportMatrix';

/** Runs the matrix command: the page's HTML, or the one-line error it printed. */
function matrixHtml(python: string, spec: string[], args: string[]): Promise<{ html: string } | { error: string }> {
    return new Promise((resolve) => {
        execFile(python, [...spec, 'matrix', '--format', 'html', ...args],
            { timeout: 300_000, maxBuffer: 64 * 1024 * 1024, cwd: __dirname }, (error, stdout, stderr) => {
                if (!error) {
                    resolve({ html: stdout });
                } else {
                    const line = stderr.trim().split('\n').pop() || error.message;
                    resolve({ error: line.replace(/^spec-contract: error: /, '') });
                }
            });
    });
}

export class MatrixView implements vscode.Disposable {
    private panel: vscode.WebviewPanel | undefined;

    /** `mayRunInterpreter`: whether a Python interpreter may run here (the server manager's, see workspace trust). */
    constructor(private readonly mayRunInterpreter: () => boolean) {}

    /** Shows the matrix of `engine` (a folder; default: the workspace folder, else the interpreter's engine). */
    async show(engine?: string): Promise<void> {
        if (!this.mayRunInterpreter()) {
            const trust = 'Manage Workspace Trust';
            const choice = await vscode.window.showWarningMessage(
                'spec-contract does not make the support matrix in an untrusted workspace: it runs a Python interpreter that the workspace may choose.',
                trust);
            if (choice === trust) {
                await vscode.commands.executeCommand('workbench.trust.manage');
            }
            return;
        }
        const folder = primaryFolder();
        const settings = readStartSettings(folder);
        const interpreter = await resolveInterpreter(settings.interpreter, folder);
        const spec = await commandLine(interpreter.path, settings.importStrategy);
        const profile = vscode.workspace.getConfiguration(SECTION, folder).inspect<string>('profile');
        const chosen = profile?.workspaceFolderValue ?? profile?.workspaceValue ?? profile?.globalValue;
        const common = [...(chosen === 'vllm' || chosen === 'sglang' ? ['--profile', chosen] : []), '--python', interpreter.path];
        const trees = engine ? [engine] : folder ? [folder.uri.fsPath, undefined] : [undefined];
        const result = await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'spec-contract: reading the engine for its support matrix' },
            async () => {
                let last: { html: string } | { error: string } = { error: 'no engine to read' };
                for (const tree of trees) {
                    last = await matrixHtml(interpreter.path, spec, [...common, ...(tree ? ['--engine', tree] : [])]);
                    if ('html' in last) {
                        break;
                    }
                }
                return last;
            });
        if ('error' in result) {
            const pick = 'Choose Engine Folder…';
            const choice = await vscode.window.showErrorMessage(`spec-contract: no support matrix: ${result.error}`, pick);
            if (choice === pick) {
                const chosen = await vscode.window.showOpenDialog({
                    canSelectFolders: true, canSelectFiles: false, openLabel: 'Use this engine package folder',
                });
                if (chosen?.[0]) {
                    await this.show(chosen[0].fsPath);
                }
            }
            return;
        }
        if (!this.panel) {
            this.panel = vscode.window.createWebviewPanel('specContract.supportMatrix', 'spec-contract: support matrix',
                vscode.ViewColumn.Active, { enableScripts: true, enableFindWidget: true, localResourceRoots: [] });
            this.panel.onDidDispose(() => (this.panel = undefined));
        }
        this.panel.webview.html = result.html;
        this.panel.reveal();
    }

    dispose(): void {
        this.panel?.dispose();
    }
}
