/**
 * Finds the Python interpreter that runs the server: the `specContract.interpreter` setting, else the active
 * interpreter of the Python extension (`ms-python.python`), else `python3` on PATH; and checks that
 * `spec_contract` is importable there before a start, so a missing package gives a clear message instead of
 * a server that dies at once.
 *
 * Every Python the extension starts runs with `-I` (isolated mode). The server's working directory is the
 * workspace folder, and a plain `python -m …` or `python -c …` looks there first for every module it imports:
 * a `spec_contract.py`, `argparse.py`, `typing.py` or `runpy.py` in the workspace would run. `-I` keeps that
 * directory off `sys.path` (`-P` would too, but only from Python 3.11; the server supports 3.10), and the
 * interpreter passes it on to the processes the server starts (multiprocessing's fork server, for one). It
 * also ignores PYTHON* variables and the user site-packages; `checkPackage` tells when spec-contract is only
 * there.
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

/** The interpreter flag every Python started by the extension gets; see the top of this file. */
export const ISOLATED = '-I';

export type PackageCheck =
    | { ok: true }
    | { ok: false; problem: 'no-interpreter' | 'missing-package' | 'only-outside-isolation' | 'broken-package'; detail: string };

/**
 * Runs `<python> -I -c "import spec_contract"`. When the package is missing there, a second run without `-I`,
 * in this extension's own directory (nothing of the workspace), tells whether it is installed only in the user
 * site-packages or on PYTHONPATH, which `-I` ignores.
 */
export async function checkPackage(python: string): Promise<PackageCheck> {
    const isolated = await importSpecContract(python, [ISOLATED]);
    if (isolated.ok || isolated.problem !== 'missing-package') {
        return isolated;
    }
    const plain = await importSpecContract(python, []);
    if (plain.ok) {
        return {
            ok: false,
            problem: 'only-outside-isolation',
            detail: `spec_contract imports in ${python} only from the user site-packages or PYTHONPATH, which "${python} ${ISOLATED}" ignores`,
        };
    }
    return isolated;
}

function importSpecContract(python: string, flags: string[]): Promise<PackageCheck> {
    return new Promise((resolve) => {
        execFile(python, [...flags, '-c', 'import spec_contract'], { timeout: 30_000, cwd: __dirname }, (error, _stdout, stderr) => {
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
