// The tags of the library's notes, with how many notes carry each, as the
// scope pickers offer them: read again whenever a picker opens.
import { api, toIpcError } from "$lib/api";
import type { IpcError } from "$lib/bindings/IpcError";
import type { TagCount } from "$lib/bindings/TagCount";

export class TagsStore {
  list = $state<TagCount[]>([]);
  error = $state<IpcError | null>(null);
  /** Whether the list has been read at least once. */
  loaded = $state(false);

  private generation = 0;

  async load(): Promise<void> {
    const generation = ++this.generation;
    try {
      const list = await api.tags();
      if (generation !== this.generation) return;
      this.list = list;
      this.error = null;
      this.loaded = true;
    } catch (error) {
      if (generation !== this.generation) return;
      this.error = toIpcError(error);
    }
  }
}

export const tags = new TagsStore();
