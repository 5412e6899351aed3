"""UI translations: English by default, Simplified Chinese with ``Settings.language == "zh"``.

A dict-based ``tr()`` (no lrelease tool is needed): the English text is the key, ``{name}``
placeholders are filled with ``str.format``. ``N_()`` marks a string for translation where it is
defined and ``tr()`` is applied later. ``tests/gui/test_i18n.py`` checks that every literal passed
to ``tr()``/``N_()`` in the GUI has a Chinese entry with the same placeholders.
"""

from __future__ import annotations

from typing import Any

from .i18n_core import CORE_ZH

__all__ = ["N_", "ZH", "language", "set_language", "tr", "tr_n"]

_language = "en"


_qt_translator: list[Any] = []  # Qt's own catalogue (standard buttons, file dialogs) while Chinese


def set_language(lang: str) -> None:
    global _language
    _language = lang if lang in ("en", "zh") else "en"
    _qt_catalogue(_language == "zh")


def _qt_catalogue(chinese: bool) -> None:
    """Qt's own strings (Save, Cancel, Close, OK, the file dialogs) from the catalogue PySide6 ships."""
    from PySide6.QtCore import QCoreApplication, QLibraryInfo, QTranslator

    app = QCoreApplication.instance()
    while _qt_translator:
        if app is not None:
            app.removeTranslator(_qt_translator[-1])
        _qt_translator.pop()
    if chinese and app is not None:
        translator = QTranslator()
        if translator.load("qtbase_zh_CN", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            app.installTranslator(translator)
            _qt_translator.append(translator)


def language() -> str:
    return _language


def N_(text: str) -> str:
    return text


def tr(text: str, /, **values: Any) -> str:
    template = ZH.get(text, text) if _language == "zh" else text
    return template.format(**values) if values else template


def tr_n(one: str, many: str, n: int, /, **values: Any) -> str:
    """``one`` when ``n`` is 1, else ``many`` (both translated; ``n`` is a value of both)."""
    return tr(one if n == 1 else many, n=n, **values)


ZH: dict[str, str] = {
    # app / errors
    "desktop-kb": "desktop-kb",
    "Settings file problem": "设置文件有问题",
    "A model is not installed": "模型尚未安装",
    "desktop-kb needs a model that is not installed yet.": "desktop-kb 需要一个尚未安装的模型。",
    "Needed file: {path}": "需要的文件：{path}",
    "Models folder: {path}": "模型文件夹：{path}",
    "What to do: {hint}": "解决方法：{hint}",
    "You can still add documents; answers need the model.": "仍可添加文档；回答问题需要该模型。",
    "Open models folder": "打开模型文件夹",
    "Re-embed {kb}": "重新嵌入 {kb}",
    "Reads its files again with the configured embedder; tags and owners stay.":
        "用当前设置的嵌入模型重新读取它的文件；标签和所有者保持不变。",
    "Re-embedding {kb}": "正在重新嵌入 {kb}",
    "Looking for its files…": "正在查找它的文件…",
    # main window
    "desktop-kb — answers from your documents": "desktop-kb — 基于你的文档回答问题",
    "New knowledge base…": "新建知识库…",
    "Settings…": "设置…",
    "Quit": "退出",
    "About desktop-kb": "关于 desktop-kb",
    "&File": "文件(&F)",
    "&Chat": "对话(&C)",
    "&Help": "帮助(&H)",
    "Models: {emb} · {llm}": "模型：{emb} · {llm}",
    "Add a folder": "添加文件夹",
    "Add files": "添加文件",
    "Documents ({patterns})": "文档（{patterns}）",
    "Adding documents failed.": "添加文档失败。",
    "reading by OCR": "正在识别文字（OCR）",
    "Only:": "仅限：",
    "Export knowledge base…": "导出知识库…",
    "Import knowledge base…": "导入知识库…",
    "Export knowledge base": "导出知识库",
    "Import knowledge base": "导入知识库",
    "Exported {kb} ({n} passages) to {path}": "已将 {kb}（{n} 个段落）导出到 {path}",
    "Imported {path} as {kb}": "已将 {path} 导入为 {kb}",
    "Edit tags…": "编辑标签…",
    "Set owner…": "设置所有者…",
    "Edit tags": "编辑标签",
    "Set owner": "设置所有者",
    "Tags of {n} files, separated by commas:": "{n} 个文件的标签，用逗号分隔：",
    "Owner of {n} files (empty: none):": "{n} 个文件的所有者（留空表示无）：",
    "tags: {tags}": "标签：{tags}",
    "owner: {owner}": "所有者：{owner}",
    "any tag": "任意标签",
    "any folder": "任意文件夹",
    "any type": "任意类型",
    "any owner": "任意所有者",
    "owner {owner}": "所有者 {owner}",
    "modified": "修改日期",
    "Clear": "清除",
    "tag {tag}": "标签 {tag}",
    "folder {folder}": "文件夹 {folder}",
    "modified {start}–{end}": "修改于 {start}–{end}",
    "Searched only: {filter}": "仅在以下范围内搜索：{filter}",
    "reading by OCR, page {page} of {pages} ({eta}): {name}": "正在识别文字（OCR），第 {page}/{pages} 页（{eta}）：{name}",
    "Not read (file type):": "未读取（文件类型）：",
    "Read by OCR: {n} files, {pages} pages.": "已用 OCR 识别：{n} 个文件，{pages} 页。",
    "This image cannot be shown.": "无法显示此图片。",
    "Cancelled; finished files stay indexed.": "已取消；已完成的文件保留在索引中。",
    "desktop-kb answers questions from your own documents, offline. Every claim is cited; click a footnote "
    "to see the passage.\n\nData folder: {path}":
        "desktop-kb 离线地根据你自己的文档回答问题。每个论断都有出处；点击脚注即可查看原文段落。\n\n数据文件夹：{path}",
    "Created {name}.": "已创建 {name}。",
    "Wait until adding documents and answering have finished.": "请等待文档添加和回答完成后再操作。",
    "Deleted {name}.": "已删除 {name}。",
    "Removed {n} files.": "已移除 {n} 个文件。",
    "Removed 1 file.": "已移除 1 个文件。",
    "Removed…": "已移除的…",
    "Files removed from this knowledge base (kept out of later scans); put them back.":
        "从此知识库移除的文件（之后的扫描不再加入）；可放回。",
    "Removed from {kb}": "已从 {kb} 移除",
    "These files and folders were removed from {kb}; later scans of their folders keep them out. "
    "Select some and put them back.": "这些文件和文件夹已从 {kb} 移除，之后扫描其文件夹时不会再加入。选择后可放回。",
    "Nothing was removed from {kb}.": "没有从 {kb} 移除任何文件。",
    "(not on disk now)": "（磁盘上已不存在）",
    "Put back": "放回",
    "Drop to add to {kb}": "松开以添加到 {kb}",
    "Queued: will be added after the current documents.": "已排队：将在当前文档处理完后添加。",
    "Added {n} files to {kb}.": "已向 {kb} 添加 {n} 个文件。",
    "Settings saved": "设置已保存",
    "Restart desktop-kb to use the new data folder, store or language.": "请重启 desktop-kb 以使用新的数据文件夹、存储或语言。",
    # knowledge base panel
    "never": "从未",
    "Knowledge bases": "知识库",
    "Tick the knowledge bases to ask; the selected one receives added documents.":
        "勾选要提问的知识库；选中的知识库接收新添加的文档。",
    "New…": "新建…",
    "Rename…": "重命名…",
    "Delete…": "删除…",
    "Check and repair…": "检查并修复…",
    "Add desktop-kb to your applications menu? It will start this file, {path}; move the file and it can be added again from here.":
        "要把 desktop-kb 添加到应用程序菜单吗？菜单项会启动此文件：{path}；移动文件后可以在这里重新添加。",
    "Knowledge base {kb}": "知识库 {kb}",
    "{kb} is damaged.": "{kb} 已损坏。",
    "{kb} has no problems.": "{kb} 没有问题。",
    "Repair": "修复",
    "Nothing could be rebuilt.": "没有可重建的内容。",
    "not repaired": "未能修复",
    "Repairing {kb}…": "正在修复 {kb}…",
    "{kb} is repaired.": "{kb} 已修复。",
    "{kb} is still damaged.": "{kb} 仍有损坏。",
    "{kb} is damaged: repair it first (right-click it: Check and repair…).": "{kb} 已损坏：请先修复（右键点击它：检查并修复…）。",
    "Documents": "文档",
    "Add folder…": "添加文件夹…",
    "Add files…": "添加文件…",
    "Remove": "移除",
    "Remove the selected files from the knowledge base (the files on disk stay).": "从知识库中移除选中的文件（磁盘上的文件保留）。",
    "Drop files or folders anywhere on the window to add them.": "把文件或文件夹拖到窗口任意位置即可添加。",
    "New knowledge base": "新建知识库",
    "Name:": "名称：",
    "Rename knowledge base": "重命名知识库",
    "New name for {name}:": "{name} 的新名称：",
    "{n} file · {chunks} chunks · {failed} failed": "{n} 个文件 · {chunks} 个片段 · {failed} 个失败",
    "{n} files · {chunks} chunks · {failed} failed": "{n} 个文件 · {chunks} 个片段 · {failed} 个失败",
    "Added 1 file to {kb}.": "已向 {kb} 添加 1 个文件。",
    "Read by OCR: 1 file, {pages} pages.": "已用 OCR 识别：1 个文件，{pages} 页。",
    "{done} of 1 file · {chunks} chunks": "{done} / 1 个文件 · {chunks} 个片段",
    "Last update: {when}": "最近更新：{when}",
    "Embedder: {id} ({dim} d)": "向量模型：{id}（{dim} 维）",
    "Chunks: {size} chars, overlap {overlap}": "分块：{size} 字符，重叠 {overlap}",
    "Answer model: {id}": "回答模型：{id}",
    "Remove {name} from {kb}?": "从 {kb} 中移除 {name}？",
    "Remove {n} files from {kb}?": "从 {kb} 中移除 {n} 个文件？",
    "Remove files": "移除文件",
    "File": "文件",
    "State": "状态",
    "Chunks": "片段",
    "Delete knowledge base": "删除知识库",
    "Delete the knowledge base {name} and its index? Your files on disk are not touched.":
        "删除知识库 {name} 及其索引？磁盘上的文件不受影响。",
    "No knowledge base yet. Drop a folder on the window to create one.": "还没有知识库。把文件夹拖到窗口上即可创建。",
    "indexed": "已索引",
    "failed": "失败",
    # ingest panel
    "estimating…": "正在估算…",
    "about {n} s left": "约剩 {n} 秒",
    "about {m} min {s} s left": "约剩 {m} 分 {s} 秒",
    "about {h} h {m} min left": "约剩 {h} 小时 {m} 分",
    "Cancel": "取消",
    "Files that could not be added:": "无法添加的文件：",
    "Dismiss": "关闭",
    "Adding to {kb}": "正在添加到 {kb}",
    "Added to {kb}": "已添加到 {kb}",
    "Updating {kb}": "正在更新 {kb}",
    "Updated {kb}": "已更新 {kb}",
    "{kb} is up to date.": "{kb} 已是最新。",
    "{n} files changed, updated": "{n} 个文件有变化，已更新",
    "1 file changed, updated": "1 个文件有变化，已更新",
    "{n} could not be read": "{n} 个无法读取",
    "Stopped bringing {kb} up to date; finished files stay indexed.": "已停止更新 {kb}；已完成的文件保留在索引中。",
    "{kb} is empty: drop files or folders on the window to add them.": "{kb} 还是空的：把文件或文件夹拖到窗口上即可添加。",
    "Read: PDF, Word, PowerPoint, Excel, OpenDocument, Markdown, text, HTML, e-mail (.eml, .msg), and scans and photos (PNG, JPEG, TIFF) by OCR.":
        "可读取：PDF、Word、PowerPoint、Excel、OpenDocument、Markdown、纯文本、HTML、电子邮件（.eml、.msg），以及扫描件和照片（PNG、JPEG、TIFF，经 OCR）。",
    "Looking for files in {what}…": "正在 {what} 中查找文件…",
    "Stopping after the current file…": "当前文件完成后停止…",
    "Cancelled — files finished so far stay indexed.": "已取消 — 已完成的文件保留在索引中。",
    "Done.": "完成。",
    "{done} / {total} files": "{done} / {total} 个文件",
    "{done} of {n} files · {chunks} chunks": "{done} / {n} 个文件 · {chunks} 个片段",
    "{added} added, {updated} updated, {unchanged} unchanged, {deleted} removed, {failed} failed, {chunks} chunks.":
        "新增 {added}，更新 {updated}，未变 {unchanged}，移除 {deleted}，失败 {failed}，共 {chunks} 个片段。",
    "finding files": "查找文件",
    "reading": "读取",
    "embedding": "向量化",
    "saving": "保存",
    "removing": "移除",
    "done": "完成",
    # chat
    "p. {pages}": "第 {pages} 页",
    "Ask a question about your documents… (Enter to ask, Ctrl+Enter for a new line)":
        "就你的文档提问…（Enter 提问，Ctrl+Enter 换行）",
    "New conversation": "新对话",
    "Conversation": "对话",
    "Details": "详情",
    "Check this computer": "检查这台电脑",
    "Check this computer…": "检查这台电脑…",
    "Measuring this computer: the answer model and the embedder run once (under a minute)…": "正在测量这台电脑：回答模型和向量模型各运行一次（不到一分钟）…",
    "Questions go to the ticked bases: {kbs}.": "问题发给勾选的知识库：{kbs}。",
    "Questions go to the ticked base.": "问题发给勾选的知识库。",
    "Questions go to the selected base. Tick several to ask them together.": "问题发给选中的知识库。勾选多个即可一起提问。",
    "Zoom in": "放大",
    "Zoom out": "缩小",
    "Details ({n})": "详情（{n}）",
    "{kb} is open in another desktop-kb window or command; close it there to see its documents.": "{kb} 正在另一个 desktop-kb 窗口或命令中打开；在那里关闭它即可在这里查看其文档。",
    "{kb} could not be read.": "无法读取 {kb}。",
    # Qt's file dialog, whose catalogue lacks them as Qt asks for them (file_dialogs.py)
    "&Look in:": "查找范围(&L)：",
    "Files of &type:": "文件类型(&T)：",
    "In use: {model}": "正在使用：{model}",
    "In use: none — answers are ranked by hybrid search (BM25 and e5-small) without a reranker. desktop-kb's own cross-encoder is off by default: it does not yet measurably improve the ranking.": "正在使用：无 —— 回答按混合检索（BM25 与 e5-small）排序，不用重排模型。desktop-kb 自己训练的交叉编码器默认关闭：它还不能明显改进排序。",
    "(no answer: {status})": "（没有回答：{status}）",
    "Answer and sources copied.": "已复制回答及其来源。",
    "Ask again": "重新回答",
    "Conversation deleted.": "对话已删除。",
    "Copy": "复制",
    "Delete": "删除",
    "Edit question": "修改问题",
    "Edit the question and ask again: the answer and those after it are replaced.": "修改问题后再次提问：这个回答及其后的回答会被替换。",
    "Export as Markdown…": "导出为 Markdown…",
    "Knowledge bases: {kbs}": "知识库：{kbs}",
    "Rename conversation": "重命名对话",
    "Saved {path}": "已保存 {path}",
    "Search conversations": "搜索对话",
    "Undo": "撤销",
    "{seconds} s": "{seconds} 秒",
    "Ask": "提问",
    "Stop": "停止",
    "Stop the answer (Esc)": "停止回答（Esc）",
    "Searching your documents…": "正在检索你的文档…",
    "Understanding the follow-up question…": "正在理解追问…",
    "The first draft did not check out: answering from passage [{n}] alone…": "初稿未通过核对：改为只根据段落[{n}]作答…",
    "Writing the answer…": "正在生成回答…",
    "Reading {n} passages…": "正在阅读 {n} 个段落…",
    "Reading 1 passage…": "正在阅读 1 个段落…",
    "Reading part {k} of {n}…": "正在阅读第 {k} 部分（共 {n} 部分）…",
    "p. {n}": "第 {n} 页",
    "pp. {a}–{b}": "第 {a}–{b} 页",
    "Loading…": "加载中…",
    "~{n} tokens": "约 {n} 词元",
    "(no sections)": "（无章节）",
    "Keywords: {k}": "关键词：{k}",
    ", about {s} s left": "，约剩 {s} 秒",
    "Summarising {kb}: {done} of {total} documents{eta}": "正在为 {kb} 生成摘要：{done}/{total} 个文档{eta}",
    "Checking the citations…": "正在核对引用…",
    "Ranking: hybrid search": "排序：混合检索",
    "Ranking: hybrid search + reranker": "排序：混合检索 + 重排序模型",
    "Passages are ranked by meaning and by keywords together. A reranker model, if you install one (see the README), reorders them more finely.": "段落按语义和关键词共同排序。若安装重排序模型（见 README），排序会更精细。",
    "The reranker failed: passages were ranked without it, so the answer may be less precise.": "重排序模型出错：段落未经重排序，回答可能不够精确。",
    "Checking the citations and writing the answer again…": "正在核对引用并重新生成回答…",
    "Stopped.": "已停止。",
    "Stopped — not checked; the draft is not shown.": "已停止——未经核对，不显示草稿。",
    "Draft — checking its citations…": "草稿——正在核对引用…",
    "The question could not be answered.": "无法回答这个问题。",
    "Asking: {kbs}": "提问范围：{kbs}",
    "No knowledge base selected": "未选择知识库",
    "Add documents first: drop a folder on the window.": "请先添加文档：把文件夹拖到窗口上。",
    "No answer: your documents do not seem to cover this question.": "无法回答：你的文档似乎没有涉及这个问题。",
    "The question is ambiguous — please clarify or rephrase.": "问题不够明确 — 请补充说明或换个说法。",
    "Not backed by a cited passage: {sentences}": "以下内容没有引用的段落支持：{sentences}",
    "Uncertain — the cited passage may not state this; click its [n] to check: {sentences}":
        "不确定——所引段落未必这样说，请点击其 [n] 核对：{sentences}",
    "Removed, because no cited passage supports it: {sentences}": "已删除（没有引用的段落支持）：{sentences}",
    "You": "你",
    "Sources": "来源",
    "Passages found": "检索到的段落",
    "Thinking…": "思考中…",
    "Ask a question about the documents in the selected knowledge bases. Answers cite their sources as [1], "
    "[2]…; click one to see the passage.":
        "就所选知识库中的文档提问。回答会以 [1]、[2]… 标注出处；点击即可查看原文段落。",
    # viewer
    "Close the viewer": "关闭查看器",
    "Text": "文本",
    "Page": "页面",
    "Open original": "打开原文件",
    "knowledge base {kb}": "知识库 {kb}",
    "The original file is no longer at {path}": "原文件已不在 {path}",
    "Page {page} is not in this PDF.": "此 PDF 中没有第 {page} 页。",
    "page {page}": "第 {page} 页",
    "pages {first}–{last}": "第 {first}–{last} 页",
    "This PDF cannot be shown.": "无法显示此 PDF。",
    "Page {page} of {total}": "第 {page} 页，共 {total} 页",
    # settings
    "(default)": "（默认）",
    "Browse…": "浏览…",
    "Settings": "设置",
    "Data folder:": "数据文件夹：",
    "Language:": "语言：",
    "empty = built-in store (recommended)": "留空 = 内置存储（推荐）",
    "Qdrant server URL:": "Qdrant 服务器地址：",
    "Qdrant API key:": "Qdrant API 密钥：",
    "A new data folder, language or store is used after a restart.": "新的数据文件夹、语言或存储在重启后生效。",
    "General": "常规",
    "Embedder backend:": "向量模型后端：",
    "Embedder model id:": "向量模型 ID：",
    "Embedder folder:": "向量模型文件夹：",
    "Reranker backend:": "重排序模型后端：",
    "Reranker model id:": "重排序模型 ID：",
    "Reranker folder:": "重排序模型文件夹：",
    "LLM backend:": "大模型后端：",
    "LLM model id:": "大模型 ID：",
    "LLM file (.gguf):": "大模型文件（.gguf）：",
    "CPU threads:": "CPU 线程数：",
    "LLM context size (tokens):": "大模型上下文长度（token）：",
    "Check that the models load": "检查模型能否加载",
    "Models": "模型",
    "Chunk size (characters):": "分块大小（字符）：",
    "Chunk overlap (characters):": "分块重叠（字符）：",
    "Recall (passages retrieved):": "召回数（检索的段落数）：",
    "Top-k (passages given to the LLM):": "Top-k（交给大模型的段落数）：",
    "Rerank threshold:": "重排序阈值：",
    "Longest answer (tokens):": "最长回答（token）：",
    "Changing the chunk size re-indexes every file of a knowledge base the next time documents are added to it.":
        "修改分块大小后，下次向知识库添加文档时会重新索引其中的所有文件。",
    "Indexing and search": "索引与检索",
    "Loading the models… (this can take a minute)": "正在加载模型…（可能需要一分钟）",
    "Embedder": "向量模型",
    "Reranker": "重排序模型",
    "LLM": "大模型",
    "Small LLM": "小模型",
    "Choose a folder": "选择文件夹",
    "Choose a file": "选择文件",
    "Settings not saved": "设置未保存",
    "Let other apps on this computer ask": "允许本机的其他应用提问",
    "API tokens…": "API 令牌…",
    "API port (127.0.0.1):": "API 端口（127.0.0.1）：",
    "API tokens": "API 令牌",
    "A new token is shown here once.": "新令牌只在这里显示一次。",
    "New token…": "新建令牌…",
    "New token": "新建令牌",
    "Revoke": "吊销",
    "Name (which program uses it):": "名称（哪个程序使用它）：",
    "Programs on this computer send a token as “Authorization: Bearer …”.": "本机程序以“Authorization: Bearer …”发送令牌。",
    "active": "有效",
    "revoked": "已吊销",
    "The local API needs the package {name} (desktop-kb[api]).": "本地 API 需要软件包 {name}（desktop-kb[api]）。",
    "Verifier": "核验模型",
    "Reader": "阅读模型",
}

ZH.update(CORE_ZH)  # the core's messages shown in the app (core_messages.py)
