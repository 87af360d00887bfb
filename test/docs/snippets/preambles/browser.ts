// Preamble of browser blocks (type-checked only): what the app provides.
export declare const session: { userId: string; token(): Promise<string>; refresh(): Promise<void> };
export declare function render(operations: readonly unknown[], online: boolean): void;
export declare function warnUser(lost: unknown): void;
export declare function tokenFromIndexedDb(): Promise<string>;
