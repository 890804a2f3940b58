/**
 * Starts, stops and restarts the language server process. Restarts are serialised (one at a time) and
 * coalesced (a burst of setting edits or interpreter switches gives one restart), and a server is never
 * started in an untrusted workspace unless the user asked for it.
 */
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, Middleware, RevealOutputChannelOn, State } from 'vscode-languageclient/node';
import { BUNDLED_SERVER, BundledProbe, checkPackage, describe, hasPythonExtension, Interpreter, ISOLATED, probeBundled, resolveInterpreter } from './python';
import { analysisSettings, primaryFolder, readStartSettings, SECTION, StartSettings } from './settings';

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed' | 'disabled' | 'restricted';

export interface ServerStateEvent {
    state: ServerState;
    detail?: string;
}

interface ServerCommand {
    command: string;
    args: string[];
}

const RESTART_DELAY_MS = 500;
const STOP_TIMEOUT_MS = 3000;

export class ServerManager implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private clientDisposables: vscode.Disposable[] = [];
    private queue: Promise<void> = Promise.resolve();
    private timer: NodeJS.Timeout | undefined;
    private readonly stateEmitter = new vscode.EventEmitter<ServerStateEvent>();
    private readonly clientEmitter = new vscode.EventEmitter<LanguageClient | undefined>();
    /** Fires with the new state of the server process. */
    readonly onDidChangeState = this.stateEmitter.event;
    /** Fires when a client became ready (or went away), e.g. to reload views that ask the server. */
    readonly onDidChangeClient = this.clientEmitter.event;
    /** Set when the user explicitly agreed to start the server in an untrusted workspace. */
    allowUntrusted = false;

    /**
     * Whether the extension may run a Python interpreter here (the server, the support matrix): the workspace is
     * trusted, or the user agreed to run it in this untrusted one.
     */
    get mayRunInterpreter(): boolean {
        return vscode.workspace.isTrusted || this.allowUntrusted;
    }

    constructor(
        private readonly output: vscode.LogOutputChannel,
        private readonly middleware: Middleware,
    ) {}

    /** The client when its server is running, else undefined. */
    get runningClient(): LanguageClient | undefined {
        return this.client?.state === State.Running ? this.client : undefined;
    }

    /** Restarts after a short quiet period; calls within that period share one restart. */
    scheduleRestart(reason: string): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.restart(reason);
        }, RESTART_DELAY_MS);
    }

    restart(reason: string): Promise<void> {
        this.queue = this.queue
            .then(() => this.restartNow(reason))
            .catch((error) => this.fail(`restart failed: ${error instanceof Error ? error.message : String(error)}`));
        return this.queue;
    }

    stop(): Promise<void> {
        this.queue = this.queue.then(() => this.stopClient());
        return this.queue;
    }

    dispose(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        void this.stop();
        this.stateEmitter.dispose();
        this.clientEmitter.dispose();
    }

    private async restartNow(reason: string): Promise<void> {
        this.output.info(`(re)starting the server: ${reason}`);
        await this.stopClient();
        const folder = primaryFolder();
        const settings = readStartSettings(folder);
        if (!settings.enable) {
            this.setState('disabled', 'specContract.enable is false');
            return;
        }
        if (!this.mayRunInterpreter) {
            this.setState('restricted', 'the workspace is not trusted');
            return;
        }
        this.setState('starting');
        const command = await this.serverCommand(settings, folder);
        if (!command) {
            return;
        }
        this.output.info(`server command: ${[command.command, ...command.args].join(' ')}`);
        const clientOptions: LanguageClientOptions = {
            documentSelector: [{ scheme: 'file', language: 'python' }],
            // File watching is left to the server: it registers its watchers dynamically.
            synchronize: { configurationSection: SECTION },
            outputChannel: this.output,
            traceOutputChannel: this.output,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: analysisSettings(folder),
            diagnosticPullOptions: { onChange: true, onSave: true },
            middleware: this.middleware,
        };
        const client = new LanguageClient(
            'specContract',
            'spec-contract',
            { command: command.command, args: command.args, options: { cwd: folder?.uri.fsPath } },
            clientOptions,
        );
        this.clientDisposables = [
            client.onDidChangeState((event) => {
                if (this.client !== client) {
                    return;
                }
                if (event.newState === State.Running) {
                    this.setState('running');
                } else if (event.newState === State.Stopped) {
                    this.setState('stopped', 'the server process stopped; see the output');
                }
            }),
        ];
        this.client = client;
        try {
            await client.start();
        } catch (error) {
            await this.stopClient();
            this.fail(`the server did not start: ${error instanceof Error ? error.message : String(error)}`);
            return;
        }
        this.setState('running');
        this.clientEmitter.fire(client);
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.clientDisposables.forEach((disposable) => disposable.dispose());
        this.clientDisposables = [];
        if (!client) {
            return;
        }
        this.clientEmitter.fire(undefined);
        try {
            await client.dispose(STOP_TIMEOUT_MS);
        } catch (error) {
            this.output.warn(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
        }
        this.setState('stopped');
    }

    /**
     * The user's own command if set; else, with `importStrategy` `fromEnvironment` and spec-contract installed in
     * the interpreter, `<python> -I -m spec_contract serve`; else the server this extension carries,
     * `<python> -I bundled/tool/server.py serve`. `-I` keeps the workspace folder, the working directory, off
     * `sys.path` (see python.ts).
     */
    private async serverCommand(settings: StartSettings, folder?: vscode.WorkspaceFolder): Promise<ServerCommand | undefined> {
        if (settings.command.length > 0) {
            return { command: settings.command[0], args: [...settings.command.slice(1), ...settings.args] };
        }
        const interpreter = await resolveInterpreter(settings.interpreter, folder);
        this.output.info(`Python interpreter: ${describe(interpreter)}`);
        if (settings.importStrategy === 'fromEnvironment') {
            const check = await checkPackage(interpreter.path);
            if (check.ok) {
                return { command: interpreter.path, args: [ISOLATED, '-m', 'spec_contract', 'serve', ...settings.args] };
            }
            if (check.problem !== 'no-interpreter') {
                const why = check.problem === 'only-outside-isolation' ? check.detail : `spec-contract is not importable in ${describe(interpreter)}`;
                this.output.warn(`${why}: running the server bundled with the extension instead`);
                void vscode.window.showWarningMessage(`spec-contract: ${why}. Running the server bundled with the extension instead (specContract.importStrategy).`);
            }
        }
        const probe = await probeBundled(interpreter.path);
        if (!probe.ok) {
            this.fail(probe.detail);
            void this.explainFailure(interpreter, probe);
            return undefined;
        }
        this.output.info(`bundled server with Python ${probe.version} at ${probe.executable}` +
            (probe.quickFixes ? '' : ' (no libcst for this Python in this .vsix: quick fixes are off)'));
        return { command: interpreter.path, args: [ISOLATED, BUNDLED_SERVER, 'serve', ...settings.args] };
    }

    private fail(detail: string): void {
        this.output.error(detail);
        this.setState('failed', detail);
    }

    private setState(state: ServerState, detail?: string): void {
        this.stateEmitter.fire({ state, detail });
    }

    private async explainFailure(interpreter: Interpreter, probe: Exclude<BundledProbe, { ok: true }>): Promise<void> {
        const select = 'Select Interpreter';
        const settings = 'Open Settings';
        const output = 'Show Output';
        const message = probe.problem === 'no-interpreter'
            ? `spec-contract: no Python interpreter at ${describe(interpreter)}. Install Python 3.10 or newer, or set specContract.interpreter.`
            : `spec-contract cannot run its server with ${describe(interpreter)}: ${probe.detail.split('\n').pop()}`;
        const actions = [...(hasPythonExtension() ? [select] : []), settings, output];
        const choice = await vscode.window.showErrorMessage(message, ...actions);
        if (choice === select) {
            await vscode.commands.executeCommand('python.setInterpreter');
        } else if (choice === settings) {
            await vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
        } else if (choice === output) {
            this.output.show();
        }
    }
}
