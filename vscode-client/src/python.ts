/**
 * Finds the Python interpreter that runs the server: the `specContract.interpreter` setting, else the active
 * interpreter of the Python extension (`ms-python.python`), else `python3` on PATH; and checks that
 * `spec_contract` is importable there before a start, so a missing package gives a clear message instead of
 * a server that dies at once.
 */
import { execFile } from 'child_process';
import * as vscode from 'vscode';

/** The part of the Python extension's API that is used here (see `@vscode/python-extension`). */
interface PythonExtensionApi {
    environments: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
        resolveEnvironment(env: { id: string; path: string }): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
}

export type InterpreterSource = 'setting specContract.interpreter' | 'Python extension' | 'PATH';

export interface Interpreter {
    path: string;
    source: InterpreterSource;
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (!extension) {
        return undefined;
    }
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments ? api : undefined;
}

export function hasPythonExtension(): boolean {
    return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

export async function resolveInterpreter(configured: string, folder?: vscode.WorkspaceFolder): Promise<Interpreter> {
    if (configured) {
        return { path: configured, source: 'setting specContract.interpreter' };
    }
    try {
        const api = await pythonApi();
        if (api) {
            const env = await api.environments.resolveEnvironment(api.environments.getActiveEnvironmentPath(folder?.uri));
            const executable = env?.executable.uri?.fsPath;
            if (executable) {
                return { path: executable, source: 'Python extension' };
            }
        }
    } catch {
        // A Python extension that fails to answer is treated like no Python extension.
    }
    return { path: process.platform === 'win32' ? 'python' : 'python3', source: 'PATH' };
}

/** Calls `listener` when the Python extension's active interpreter changes (no-op without the extension). */
export async function onDidChangePythonInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
    try {
        return (await pythonApi())?.environments.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}

export type PackageCheck =
    | { ok: true }
    | { ok: false; problem: 'no-interpreter' | 'missing-package' | 'broken-package'; detail: string };

/** Runs `<python> -c "import spec_contract"`. */
export function checkPackage(python: string): Promise<PackageCheck> {
    return new Promise((resolve) => {
        execFile(python, ['-c', 'import spec_contract'], { timeout: 30_000 }, (error, _stdout, stderr) => {
            if (!error) {
                resolve({ ok: true });
            } else if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
                resolve({ ok: false, problem: 'no-interpreter', detail: `${python} was not found` });
            } else if (/ModuleNotFoundError: No module named 'spec_contract'/.test(stderr)) {
                resolve({ ok: false, problem: 'missing-package', detail: stderr.trim() });
            } else {
                resolve({ ok: false, problem: 'broken-package', detail: (stderr || error.message).trim() });
            }
        });
    });
}
