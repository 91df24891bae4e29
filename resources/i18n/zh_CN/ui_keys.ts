<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>GenerateKeyDialog</name>
    <message>
        <source>New key for {platform}</source>
        <translation>为 {platform} 新建密钥</translation>
    </message>
    <message>
        <source>Rotate key for {platform}</source>
        <translation>轮换 {platform} 的密钥</translation>
    </message>
    <message>
        <source>The private key goes into your system keyring only. A passphrase is optional: the keyring already protects it, but a passphrase is asked again each session.</source>
        <translation>私钥只保存在你的系统密钥环中。口令是可选的：密钥环已经保护了私钥，但设置口令后每次会话都会再询问一次。</translation>
    </message>
    <message>
        <source>ed25519 (recommended)</source>
        <translation>ed25519（推荐）</translation>
    </message>
    <message>
        <source>RSA 4096 (for old servers)</source>
        <translation>RSA 4096（用于旧服务器）</translation>
    </message>
    <message>
        <source>Key type</source>
        <translation>密钥类型</translation>
    </message>
    <message>
        <source>Passphrase (optional)</source>
        <translation>口令（可选）</translation>
    </message>
    <message>
        <source>Repeat passphrase</source>
        <translation>再次输入口令</translation>
    </message>
    <message>
        <source>Rotate</source>
        <translation>轮换</translation>
    </message>
    <message>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>The two passphrases differ.</source>
        <translation>两次输入的口令不一致。</translation>
    </message>
</context>
<context>
    <name>ImportKeyDialog</name>
    <message>
        <source>Import a key for {platform}</source>
        <translation>为 {platform} 导入密钥</translation>
    </message>
    <message>
        <source>Paste a private key (OpenSSH or PEM) or choose its file. It is copied into your system keyring; the file you chose is not changed. Consider deleting other copies.</source>
        <translation>粘贴私钥（OpenSSH 或 PEM 格式）或选择私钥文件。私钥会复制到你的系统密钥环中，所选文件不会被修改。建议删除其他副本。</translation>
    </message>
    <message>
        <source>Private key</source>
        <translation>私钥</translation>
    </message>
    <message>
        <source>Choose file…</source>
        <translation>选择文件…</translation>
    </message>
    <message>
        <source>Its passphrase (if any)</source>
        <translation>私钥口令（如有）</translation>
    </message>
    <message>
        <source>Keep the passphrase (asked each session)</source>
        <translation>保留口令（每次会话都会询问）</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Private key file</source>
        <translation>私钥文件</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <source>the file is too large to be an SSH key</source>
        <translation>文件太大，不可能是 SSH 密钥</translation>
    </message>
    <message>
        <source>Could not read {path}: {error}.</source>
        <translation>无法读取 {path}：{error}。</translation>
    </message>
    <message>
        <source>Paste a key or choose its file.</source>
        <translation>请粘贴密钥或选择密钥文件。</translation>
    </message>
</context>
<context>
    <name>KeysPage</name>
    <message>
        <source>no key yet: generate or import one</source>
        <translation>还没有密钥：请生成或导入</translation>
    </message>
    <message>
        <source>same key as {platforms}</source>
        <translation>与 {platforms} 使用同一密钥</translation>
    </message>
    <message>
        <source>old key kept until you forget it</source>
        <translation>旧密钥保留，直到你将其忘记</translation>
    </message>
    <message>
        <source>passphrase</source>
        <translation>有口令</translation>
    </message>
    <message>
        <source>No platforms yet</source>
        <translation>还没有平台</translation>
    </message>
    <message>
        <source>Each platform you rent from gets its own SSH key, kept in your system keyring and never in a plain file. Add a platform on the Hosts page first.</source>
        <translation>你租用的每个平台都有自己的 SSH 密钥，保存在系统密钥环中，绝不存为明文文件。请先在“主机”页添加平台。</translation>
    </message>
    <message>
        <source>Add a platform</source>
        <translation>添加平台</translation>
    </message>
    <message>
        <source>One key per platform. Private keys live only in your system keyring; paste the public key into the platform&apos;s console, then test the connection on the Hosts page.</source>
        <translation>每个平台一个密钥。私钥只保存在你的系统密钥环中；把公钥粘贴到平台控制台，然后在“主机”页测试连接。</translation>
    </message>
    <message>
        <source>Generate…</source>
        <translation>生成…</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <source>Copy public key</source>
        <translation>复制公钥</translation>
    </message>
    <message>
        <source>Load into ssh-agent…</source>
        <translation>加载到 ssh-agent…</translation>
    </message>
    <message>
        <source>Rotate…</source>
        <translation>轮换…</translation>
    </message>
    <message>
        <source>Forget old key</source>
        <translation>忘记旧密钥</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Export private key…</source>
        <translation>导出私钥…</translation>
    </message>
    <message>
        <source>Set up `ssh ALIAS`</source>
        <translation>设置 `ssh ALIAS`</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Fingerprint (SHA256)</source>
        <translation>指纹（SHA256）</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <source>Hosts</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>{platforms} share one key</source>
        <translation>{platforms} 共用同一密钥</translation>
    </message>
    <message>
        <source>Warning: {groups}. One leaked key would open all of them: rotate one of them.</source>
        <translation>警告：{groups}。一个密钥泄露就会危及所有这些平台：请轮换其中一个的密钥。</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>密钥</translation>
    </message>
    <message>
        <source>Generating a {kind} key for {platform}…</source>
        <translation>正在为 {platform} 生成 {kind} 密钥…</translation>
    </message>
    <message>
        <source>New {kind} key for {platform}: copy its public key into the platform&apos;s console.</source>
        <translation>已为 {platform} 生成新的 {kind} 密钥：请把公钥复制到平台控制台。</translation>
    </message>
    <message>
        <source>Importing the key of {platform}…</source>
        <translation>正在导入 {platform} 的密钥…</translation>
    </message>
    <message>
        <source>Key imported for {platform}.</source>
        <translation>已为 {platform} 导入密钥。</translation>
    </message>
    <message>
        <source>Public key of {platform} copied: paste it into the platform&apos;s SSH keys page.</source>
        <translation>已复制 {platform} 的公钥：请粘贴到平台的 SSH 密钥页面。</translation>
    </message>
    <message>
        <source>Passphrase</source>
        <translation>口令</translation>
    </message>
    <message>
        <source>Passphrase of the {platform} key</source>
        <translation>{platform} 密钥的口令</translation>
    </message>
    <message>
        <source>Load into ssh-agent</source>
        <translation>加载到 ssh-agent</translation>
    </message>
    <message>
        <source>Keep the key in ssh-agent for how many minutes? (0 = until the agent stops)</source>
        <translation>密钥在 ssh-agent 中保留多少分钟？（0 = 直到 agent 停止）</translation>
    </message>
    <message>
        <source>{message} Your own tools can use it through your session&apos;s agent; `ssh ALIAS` for a managed host uses GPU Companion&apos;s agent while the app runs.</source>
        <translation>{message}你自己的工具可以通过会话的 agent 使用它；应用运行期间，受管主机的 `ssh ALIAS` 使用 GPU Companion 自己的 agent。</translation>
    </message>
    <message>
        <source>Loading the {platform} key into ssh-agent…</source>
        <translation>正在把 {platform} 的密钥加载到 ssh-agent…</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>New key for {platform} ({fingerprint}). Hosts still set up with the old key: {hosts}. Paste the new public key into the platform&apos;s console; the old key keeps working here until you click &apos;Forget old key&apos;.</source>
        <translation>已为 {platform} 生成新密钥（{fingerprint}）。仍在使用旧密钥的主机：{hosts}。请把新公钥粘贴到平台控制台；在你点击“忘记旧密钥”之前，旧密钥在这里仍然可用。</translation>
    </message>
    <message>
        <source>Rotating the key of {platform}…</source>
        <translation>正在轮换 {platform} 的密钥…</translation>
    </message>
    <message>
        <source>Forgetting the old key…</source>
        <translation>正在忘记旧密钥…</translation>
    </message>
    <message>
        <source>The old key of {platform} is gone from the keyring.</source>
        <translation>{platform} 的旧密钥已从密钥环中移除。</translation>
    </message>
    <message>
        <source>Delete the key of {platform} from your keyring?

GPU Companion will no longer reach: {hosts}.</source>
        <translation>从密钥环中删除 {platform} 的密钥？

GPU Companion 将无法再连接：{hosts}。</translation>
    </message>
    <message>
        <source>Delete the key of {platform} from your keyring?</source>
        <translation>从密钥环中删除 {platform} 的密钥？</translation>
    </message>
    <message>
        <source>Delete key</source>
        <translation>删除密钥</translation>
    </message>
    <message>
        <source>Deleting the key of {platform}…</source>
        <translation>正在删除 {platform} 的密钥…</translation>
    </message>
    <message>
        <source>The key of {platform} was deleted.</source>
        <translation>{platform} 的密钥已删除。</translation>
    </message>
    <message>
        <source>Exporting…</source>
        <translation>正在导出…</translation>
    </message>
    <message>
        <source>Private key written to {path} (mode 0600). Delete it once it has been moved.</source>
        <translation>私钥已写入 {path}（权限 0600）。移走后请删除该文件。</translation>
    </message>
    <message>
        <source>Writing the ssh config…</source>
        <translation>正在写入 ssh 配置…</translation>
    </message>
    <message>
        <source>ssh config ready: `ssh ALIAS` works in a terminal while GPU Companion runs (its own ssh-agent holds the keys).
{summary}</source>
        <translation>ssh 配置已就绪：GPU Companion 运行期间，可在终端中使用 `ssh ALIAS`（密钥由它自己的 ssh-agent 持有）。
{summary}</translation>
    </message>
</context>
<context>
    <name>confirm_export</name>
    <message>
        <source>Export private key</source>
        <translation>导出私钥</translation>
    </message>
    <message>
        <source>This writes the private key of {platform} into a plain file (mode 0600).

Anyone who can read that file can log in to every host of this platform. Only do this to move the key to another computer, and delete the file afterwards.</source>
        <translation>这会把 {platform} 的私钥写入一个明文文件（权限 0600）。

任何能读取该文件的人都能登录这个平台的所有主机。只在需要把密钥迁移到另一台电脑时这样做，完成后请删除该文件。</translation>
    </message>
    <message>
        <source>Export private key to</source>
        <translation>导出私钥到</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
</context>
</TS>
