/**
 * Reads the `specContract.*` settings. The server reads the analysis settings itself through
 * `workspace/configuration`; the client only needs the ones that decide how to start the server.
 */
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

export const SECTION = 'specContract';

/** Settings whose change needs a new server process rather than a `didChangeConfiguration`. */
const RESTART_KEYS = ['enable', 'interpreter', 'importStrategy', 'server.command', 'server.args'];

export interface StartSettings {
    enable: boolean;
    /** Expanded interpreter path, or '' when not set. */
    interpreter: string;
    /** `useBundled`: the server this extension carries; `fromEnvironment`: the one installed in the interpreter. */
    importStrategy: 'useBundled' | 'fromEnvironment';
    /** Expanded user server command, or [] when not set. */
    command: string[];
    args: string[];
}

/**
 * The folder whose settings decide the (single) server process: one server serves every workspace folder,
 * so per-folder start settings are taken from the first folder.
 */
export function primaryFolder(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
}

export function readStartSettings(folder = primaryFolder()): StartSettings {
    const config = vscode.workspace.getConfiguration(SECTION, folder);
    return {
        enable: config.get<boolean>('enable', true),
        interpreter: expand(config.get<string>('interpreter', '').trim(), folder),
        importStrategy: config.get<string>('importStrategy') === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled',
        command: config.get<string[]>('server.command', []).map((part) => expand(part, folder)),
        args: config.get<string[]>('server.args', []).map((part) => expand(part, folder)),
    };
}

/** The whole `specContract` section, sent as initializationOptions so the first index uses it. */
export function analysisSettings(folder = primaryFolder()): Record<string, unknown> {
    const config = vscode.workspace.getConfiguration(SECTION, folder);
    return {
        enable: config.get('enable'),
        profile: config.get('profile'),
        select: config.get('select'),
        severity: config.get('severity'),
        include: config.get('include'),
        exclude: config.get('exclude'),
        debounce: config.get('debounce'),
    };
}

export function needsRestart(event: vscode.ConfigurationChangeEvent): boolean {
    return RESTART_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`));
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`, as VS Code's own settings do. */
export function expand(value: string, folder?: vscode.WorkspaceFolder): string {
    let result = value
        .replace(/\$\{userHome\}/g, os.homedir())
        .replace(/\$\{env:([^}]+)\}/g, (_match, name: string) => process.env[name] ?? '');
    if (folder) {
        result = result.replace(/\$\{workspaceFolder\}/g, folder.uri.fsPath);
    }
    if (result === '~' || result.startsWith('~/')) {
        result = path.join(os.homedir(), result.slice(1));
    }
    return result;
}
