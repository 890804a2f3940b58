/**
 * The Contract tree (its own activity bar entry, "spec-contract"): per workspace folder, role → method → call sites, each call site
 * opening the worker line that makes the call. The data comes from the server's `spec-contract.contract`
 * command (`workspace/executeCommand`), which returns
 * `{"folders": [{"root": uri, "contract": [{"role", "member", "required",
 *   "call_sites": [{"uri", "line", "character", "text", "guarded"}]}]}]}` with 0-based lines and characters.
 */
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

export const VIEW_ID = 'specContract.contract';
const SERVER_COMMAND = 'spec-contract.contract';

export interface CallSite {
    uri: string;
    line: number;
    character: number;
    text: string;
    guarded: boolean;
}

export interface ContractEntry {
    role: string;
    member: string;
    required: boolean;
    call_sites: CallSite[];
}

export interface FolderContract {
    root: string;
    contract: ContractEntry[];
}

type Node =
    | { kind: 'folder'; folder: FolderContract }
    | { kind: 'role'; root: string; role: string; entries: ContractEntry[] }
    | { kind: 'member'; root: string; entry: ContractEntry }
    | { kind: 'site'; root: string; site: CallSite }
    | { kind: 'message'; text: string };

export class ContractView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
    private folders: FolderContract[] | undefined;
    private message: string | undefined;
    private readonly changed = new vscode.EventEmitter<void>();
    readonly onDidChangeTreeData = this.changed.event;
    private readonly view: vscode.TreeView<Node>;

    constructor(private readonly client: () => LanguageClient | undefined) {
        this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    }

    /** What the view holds now: read by the end-to-end test hook (tests/vscode/hook/) through the real API. */
    snapshot(): { visible: boolean; folders: FolderContract[] | undefined; message: string | undefined } {
        return { visible: this.view.visible, folders: this.folders, message: this.message };
    }

    /** Reveals the view and loads the contract (again when the server starts, if it is not running yet). */
    async show(): Promise<void> {
        await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
        await this.refresh();
    }

    async refresh(): Promise<void> {
        const client = this.client();
        if (!client) {
            this.set(undefined, 'the language server is not running (see spec-contract: Show Output)');
            return;
        }
        try {
            const result = await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_COMMAND, arguments: [] });
            const folders = parseContract(result);
            this.set(folders, folders.some((folder) => folder.contract.length > 0) ? undefined : 'no contract calls found in the workspace');
        } catch (error) {
            this.set(undefined, `the server could not give the contract: ${error instanceof Error ? error.message : String(error)}`);
        }
    }

    /** Forgets the data, e.g. when the server went away. */
    clear(): void {
        this.set(undefined, undefined);
    }

    getChildren(node?: Node): Node[] {
        if (!node) {
            if (this.message) {
                return [{ kind: 'message', text: this.message }];
            }
            const folders = this.folders ?? [];
            return folders.length === 1 ? rolesOf(folders[0]) : folders.map((folder) => ({ kind: 'folder', folder }));
        }
        switch (node.kind) {
            case 'folder':
                return rolesOf(node.folder);
            case 'role':
                return node.entries.map((entry) => ({ kind: 'member', root: node.root, entry }));
            case 'member':
                return node.entry.call_sites.map((site) => ({ kind: 'site', root: node.root, site }));
            default:
                return [];
        }
    }

    getTreeItem(node: Node): vscode.TreeItem {
        // Everything starts expanded: the contract of a real engine is a few dozen lines, read at a glance.
        const Expanded = vscode.TreeItemCollapsibleState.Expanded;
        switch (node.kind) {
            case 'message': {
                const item = new vscode.TreeItem(node.text);
                item.tooltip = node.text;
                item.iconPath = new vscode.ThemeIcon('info');
                return item;
            }
            case 'folder': {
                const item = new vscode.TreeItem(vscode.Uri.parse(node.folder.root), Expanded);
                item.iconPath = vscode.ThemeIcon.Folder;
                return item;
            }
            case 'role': {
                const item = new vscode.TreeItem(node.role, Expanded);
                item.description = `${node.entries.length} method${node.entries.length === 1 ? '' : 's'}`;
                item.tooltip = `Methods that workers call on the ${node.role} model`;
                item.iconPath = new vscode.ThemeIcon('symbol-namespace');
                return item;
            }
            case 'member': {
                const { entry } = node;
                const item = new vscode.TreeItem(entry.member, Expanded);
                const sites = `${entry.call_sites.length} call site${entry.call_sites.length === 1 ? '' : 's'}`;
                item.description = `${entry.required ? 'required' : 'optional (guarded)'} · ${sites}`;
                item.iconPath = new vscode.ThemeIcon('symbol-method');
                return item;
            }
            case 'site': {
                const { site } = node;
                const uri = vscode.Uri.parse(site.uri);
                const where = `${relativePath(node.root, uri)}:${site.line + 1}`;
                const item = new vscode.TreeItem(`${where.split('/').pop()}`);
                item.description = `${site.guarded ? '(guarded) ' : ''}${site.text.trim()}`;
                item.tooltip = new vscode.MarkdownString(`${where}${site.guarded ? ' (guarded)' : ''}`).appendCodeblock(site.text.trim(), 'python');
                item.iconPath = new vscode.ThemeIcon(site.guarded ? 'shield' : 'call-outgoing');
                item.resourceUri = uri;
                const position = new vscode.Position(site.line, site.character);
                item.command = {
                    title: 'Open call site',
                    command: 'vscode.open',
                    arguments: [uri, { selection: new vscode.Range(position, position) }],
                };
                return item;
            }
        }
    }

    dispose(): void {
        this.view.dispose();
        this.changed.dispose();
    }

    private set(folders: FolderContract[] | undefined, message: string | undefined): void {
        this.folders = folders;
        this.message = message;
        this.changed.fire();
    }
}

function rolesOf(folder: FolderContract): Node[] {
    const roles = new Map<string, ContractEntry[]>();
    for (const entry of folder.contract) {
        roles.set(entry.role, [...(roles.get(entry.role) ?? []), entry]);
    }
    return [...roles].map(([role, entries]) => ({ kind: 'role', root: folder.root, role, entries }));
}

function relativePath(root: string, uri: vscode.Uri): string {
    const rootPath = vscode.Uri.parse(root).path.replace(/\/$/, '');
    return uri.path.startsWith(`${rootPath}/`) ? uri.path.slice(rootPath.length + 1) : uri.fsPath;
}

/** Checks the server's answer so that a malformed one gives a message rather than a broken tree. */
function parseContract(result: unknown): FolderContract[] {
    const folders = (result as { folders?: unknown })?.folders;
    if (!Array.isArray(folders)) {
        throw new Error(`unexpected answer to ${SERVER_COMMAND}: ${JSON.stringify(result)}`);
    }
    return folders.map((folder: FolderContract) => {
        if (typeof folder?.root !== 'string' || !Array.isArray(folder.contract)) {
            throw new Error(`unexpected folder in the contract: ${JSON.stringify(folder)}`);
        }
        return folder;
    });
}
