/**
 * Entry point: wires the server manager, the status bar item, the contract view and the commands, and
 * restarts the server when the settings or the interpreter that decide its start change.
 */
import * as vscode from 'vscode';
import { ContractView } from './contractView';
import { MatrixView, SHOW_MATRIX } from './matrixView';
import { onDidChangePythonInterpreter } from './python';
import { ServerManager } from './server';
import { needsRestart, readStartSettings } from './settings';
import { StatusIndicator } from './status';

let manager: ServerManager | undefined;

/** The parts a wrapping entry point reads: the end-to-end test build (tests/vscode/hook/) checks them. */
export interface Wiring {
    contract: ContractView;
    status: StatusIndicator;
}

export function activate(context: vscode.ExtensionContext): void {
    // Nothing is returned: what `activate` returns becomes the extension's API for other extensions.
    wire(context);
}

/** Everything `activate` does. */
export function wire(context: vscode.ExtensionContext): Wiring {
    const output = vscode.window.createOutputChannel('spec-contract', { log: true });
    const status = new StatusIndicator();
    const server: ServerManager = new ServerManager(output, {
        handleWorkDoneProgress: (token, params, next) => {
            status.progress(params);
            if (params.kind === 'end') {
                // A finished (re-)index may have changed the contract.
                void contract.refresh();
            }
            next(token, params);
        },
    });
    manager = server;
    const contract = new ContractView(() => server.runningClient);
    const matrix = new MatrixView(() => server.mayRunInterpreter);

    context.subscriptions.push(
        output,
        status,
        server,
        contract,
        server.onDidChangeState((event) => status.setServerState(event)),
        server.onDidChangeClient((client) => (client ? void contract.refresh() : contract.clear())),
        vscode.commands.registerCommand('specContract.restart', () => server.restart('restart command')),
        vscode.commands.registerCommand('specContract.showOutput', () => output.show()),
        vscode.commands.registerCommand('specContract.showContract', () => contract.show()),
        vscode.commands.registerCommand('specContract.refreshContract', () => contract.refresh()),
        matrix,
        vscode.commands.registerCommand(SHOW_MATRIX, () => matrix.show()),
        vscode.commands.registerCommand('specContract.startUntrusted', () => {
            server.allowUntrusted = true;
            return server.restart('started in an untrusted workspace on request');
        }),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (needsRestart(event)) {
                server.scheduleRestart('settings changed');
            }
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => server.scheduleRestart('workspace trusted')),
    );
    void onDidChangePythonInterpreter(() => {
        const settings = readStartSettings();
        if (!settings.interpreter && settings.command.length === 0) {
            server.scheduleRestart('Python interpreter changed');
        }
    }).then((listener) => listener && context.subscriptions.push(listener));

    void server.restart('activation');
    if (!vscode.workspace.isTrusted) {
        void askToStartUntrusted();
    }
    return { contract, status };
}

export function deactivate(): Promise<void> | undefined {
    return manager?.stop();
}

async function askToStartUntrusted(): Promise<void> {
    const trust = 'Manage Workspace Trust';
    const start = 'Start Anyway';
    const choice = await vscode.window.showInformationMessage(
        'spec-contract does not start its language server in an untrusted workspace: it runs a Python interpreter that the workspace may choose.',
        trust,
        start,
    );
    if (choice === trust) {
        await vscode.commands.executeCommand('workbench.trust.manage');
    } else if (choice === start) {
        await vscode.commands.executeCommand('specContract.startUntrusted');
    }
}
