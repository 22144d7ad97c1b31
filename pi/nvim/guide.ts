/**
 * The one prompt guide for the model: when to use the `nvim_*` tools rather
 * than pi's own, how edits through them behave, and where paths start. Every
 * bridged tool carries the same lines; pi lists each guideline once.
 */

/** Neovim's own `instructions` beyond this are cut. */
const MAX_INSTRUCTIONS_CHARS = 1_500;

/** The guide for a catalog whose pi names are `piNames` (remote name → pi name), rooted at `root`. */
export function promptGuide(piNames: ReadonlyMap<string, string>, root: string, instructions?: string): string[] {
	const named = (...remote: string[]) =>
		remote
			.map((r) => piNames.get(r))
			.filter((n): n is string => n !== undefined)
			.join(", ");
	const lines: string[] = [];
	const semantic = named("find_definition", "find_references", "get_symbol_info", "search_symbol", "get_document_symbols");
	const problems = named("get_file_problems");
	const text = named("get_file_text_by_path");
	const uses = [
		semantic && `definitions, references, symbols and hover (${semantic}) rather than grep`,
		problems && `diagnostics (${problems})`,
		text && `the text of files open in Neovim, unsaved edits included (${text})`,
	].filter(Boolean);
	lines.push(
		`The nvim_* tools are answered by the Neovim the user edits this project in, with its language servers. Use them for what an editor knows: ${
			uses.length > 0 ? uses.join("; ") : "its buffers and language servers"
		}. pi's own read, edit and write still work on the files on disk.`,
	);
	const edits = named("replace_text_in_file", "create_new_file", "rename_refactoring", "reformat_file", "apply_code_action");
	if (edits) {
		lines.push(
			`Edits through ${edits} wait for the user to review them in Neovim: they may be declined, or accepted after the user changed them (the result says so; read the file again then).${
				problems ? ` After editing a file, check ${problems} for it.` : ""
			}`,
		);
	}
	lines.push(
		`Paths in nvim_* arguments and results are relative to ${root}, pi's working directory, as for pi's own tools; lines and columns are 1-based (columns count UTF-16 code units).`,
	);
	const own = instructions?.trim();
	if (own) {
		const cut = own.length > MAX_INSTRUCTIONS_CHARS ? `${own.slice(0, MAX_INSTRUCTIONS_CHARS)}…` : own;
		lines.push(`Neovim's own instructions for its tools: ${cut.replace(/\s*\n\s*/g, " ")}`);
	}
	return lines;
}
