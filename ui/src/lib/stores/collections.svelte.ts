// The saved collections, as Library manages them and the scope pickers
// offer them: read again whenever a picker opens or Library changes one.
import { api, toIpcError } from "$lib/api";
import type { Collection } from "$lib/bindings/Collection";
import type { IpcError } from "$lib/bindings/IpcError";

export class CollectionsStore {
  list = $state<Collection[]>([]);
  error = $state<IpcError | null>(null);
  loading = $state(false);
  /** Whether the list has been read at least once. */
  loaded = $state(false);

  private generation = 0;

  async load(): Promise<void> {
    const generation = ++this.generation;
    this.loading = true;
    try {
      const list = await api.collections();
      if (generation !== this.generation) return;
      this.list = list;
      this.error = null;
      this.loaded = true;
    } catch (error) {
      if (generation !== this.generation) return;
      this.error = toIpcError(error);
    } finally {
      if (generation === this.generation) this.loading = false;
    }
  }

  /** Creates or replaces a collection; rejects with the engine's IpcError, the list unchanged. */
  async save(name: string, folders: string[], tags: string[]): Promise<Collection> {
    try {
      const saved = await api.saveCollection(name, folders, tags);
      await this.load();
      return saved;
    } catch (error) {
      throw toIpcError(error);
    }
  }

  async remove(name: string): Promise<void> {
    try {
      await api.deleteCollection(name);
    } catch (error) {
      throw toIpcError(error);
    } finally {
      await this.load();
    }
  }
}

export const collections = new CollectionsStore();
