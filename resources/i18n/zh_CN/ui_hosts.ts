<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AddAccountDialog</name>
    <message>
        <source>Add a provider account</source>
        <translation>添加平台账户</translation>
    </message>
    <message>
        <source>paste the key from the provider&apos;s console</source>
        <translation>粘贴平台控制台中的 API 密钥</translation>
    </message>
    <message>
        <source>optional: the provider&apos;s own address is used</source>
        <translation>可选：默认使用平台自己的地址</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>API address</source>
        <translation>API 地址</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Create the key at {page}. It is kept in the system keyring, never in GPU Companion&apos;s database, and sent only to the provider&apos;s API.</source>
        <translation>请在 {page} 创建密钥。密钥保存在系统密钥环中，不会存入 GPU Companion 的数据库，只会发送给平台的 API。</translation>
    </message>
    <message>
        <source>Create the key at the provider console. It is kept in the system keyring, never in GPU Companion&apos;s database, and sent only to the provider&apos;s API.</source>
        <translation>请在平台控制台创建密钥。密钥保存在系统密钥环中，不会存入 GPU Companion 的数据库，只会发送给平台的 API。</translation>
    </message>
    <message>
        <source>The account was not added: {error}</source>
        <translation>账户未添加：{error}</translation>
    </message>
</context>
<context>
    <name>HostConnection</name>
    <message>
        <source>“This computer” needs no SSH connection.</source>
        <translation>“本机”无需 SSH 连接。</translation>
    </message>
    <message>
        <source>Connecting to {alias}…</source>
        <translation>正在连接 {alias}…</translation>
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
        <source>Connection to {alias}</source>
        <translation>连接 {alias}</translation>
    </message>
</context>
<context>
    <name>HostDialog</name>
    <message>
        <source>Edit host</source>
        <translation>编辑主机</translation>
    </message>
    <message>
        <source>Add host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>Alias</source>
        <translation>别名</translation>
    </message>
    <message>
        <source>short name for `ssh ALIAS`, e.g. gpu1</source>
        <translation>用于 `ssh ALIAS` 的短名称，例如 gpu1</translation>
    </message>
    <message>
        <source>Host name or IP</source>
        <translation>主机名或 IP</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>GPU model</source>
        <translation>GPU 型号</translation>
    </message>
    <message>
        <source>GPU count</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Instance id</source>
        <translation>实例 ID</translation>
    </message>
    <message>
        <source>the provider&apos;s id, e.g. 12345678 (release commands)</source>
        <translation>平台上的实例 ID，例如 12345678（释放命令要用）</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>Trusted host key</source>
        <translation>已信任的主机密钥</translation>
    </message>
</context>
<context>
    <name>HostsPage</name>
    <message>
        <source>active</source>
        <translation>使用中</translation>
    </message>
    <message>
        <source>released</source>
        <translation>已释放</translation>
    </message>
    <message>
        <source>stopped (disk billed)</source>
        <translation>已关机（磁盘仍计费）</translation>
    </message>
    <message>
        <source>gone at the provider</source>
        <translation>平台上已不存在</translation>
    </message>
    <message>
        <source>second</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>minute</source>
        <translation>分钟</translation>
    </message>
    <message>
        <source>hour</source>
        <translation>小时</translation>
    </message>
    <message>
        <source>No rented hosts yet</source>
        <translation>还没有租用主机</translation>
    </message>
    <message>
        <source>Add the platform you rent from, then the host it gave you (host name, port and user from its console). Already use ~/.ssh/config? Import from it. “This computer” is always listed below for local GPUs. Rent on vast.ai or RunPod? Add a provider account, then Sync providers imports your instances.</source>
        <translation>先添加你租用的平台，再添加它分配给你的主机（主机名、端口和用户见平台控制台）。已经在用 ~/.ssh/config？直接从中导入。下方始终列出“本机”，用于本地 GPU。在 vast.ai 或 RunPod 上租用？添加平台账户后，“同步平台”会导入你的实例。</translation>
    </message>
    <message>
        <source>Add platform</source>
        <translation>添加平台</translation>
    </message>
    <message>
        <source>Add host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>Import from ~/.ssh/config</source>
        <translation>从 ~/.ssh/config 导入</translation>
    </message>
    <message>
        <source>Provider accounts…</source>
        <translation>平台账户…</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Self-check</source>
        <translation>自检</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>SSH options…</source>
        <translation>SSH 选项…</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Billed per</source>
        <translation>计费粒度</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
    <message>
        <source>Console</source>
        <translation>控制台</translation>
    </message>
    <message>
        <source>Alias</source>
        <translation>别名</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>Platforms</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Sync providers</source>
        <translation>同步平台</translation>
    </message>
    <message>
        <source>Forgotten instances…</source>
        <translation>遗忘的实例…</translation>
    </message>
    <message>
        <source>Hosts</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>this computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>local nvidia-smi</source>
        <translation>本机 nvidia-smi</translation>
    </message>
    <message>
        <source>built in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>Platform added.</source>
        <translation>已添加平台。</translation>
    </message>
    <message>
        <source>Host added.</source>
        <translation>已添加主机。</translation>
    </message>
    <message>
        <source>Remove {name}? Its history is kept.</source>
        <translation>移除 {name}？其历史记录会保留。</translation>
    </message>
    <message>
        <source>Cannot remove</source>
        <translation>无法移除</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Imported %n host(s) from {path}.</source>
        <translation>已从 {path} 导入 %n 台主机。</translation>
    </message>
    <message>
        <source>Select a host to test.</source>
        <translation>请选择要测试的主机。</translation>
    </message>
    <message>
        <source>Select a rented host first.</source>
        <translation>请先选择一台租用主机。</translation>
    </message>
    <message>
        <source>Select a host first</source>
        <translation>请先选择主机</translation>
    </message>
</context>
<context>
    <name>ImportDialog</name>
    <message>
        <source>Import hosts from ssh config</source>
        <translation>从 ssh 配置导入主机</translation>
    </message>
    <message>
        <source>Hosts found in {path} (wildcard entries are skipped; the file is only read, never changed):</source>
        <translation>在 {path} 中找到的主机（跳过通配符条目；只读取该文件，不会修改）：</translation>
    </message>
    <message>
        <source>No importable Host entries found.</source>
        <translation>没有找到可导入的 Host 条目。</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>{alias} — cannot import: {problem}</source>
        <translation>{alias} — 无法导入：{problem}</translation>
    </message>
    <message>
        <source>{host}  (already in GPU Companion)</source>
        <translation>{host}  （已在 GPU Companion 中）</translation>
    </message>
</context>
<context>
    <name>OrphansDialog</name>
    <message>
        <source>Forgotten instances</source>
        <translation>遗忘的实例</translation>
    </message>
    <message>
        <source>Price</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>Account</source>
        <translation>账户</translation>
    </message>
    <message>
        <source>Instance</source>
        <translation>实例</translation>
    </message>
    <message>
        <source>These instances run (and bill) at the provider, but GPU Companion does not meter them. Import one to meter it as a host, or import it and release it.</source>
        <translation>这些实例正在平台上运行（并在计费），但 GPU Companion 没有计量它们。导入后即作为主机计量，也可以导入后将其释放。</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Import and release…</source>
        <translation>导入并释放…</translation>
    </message>
    <message>
        <source>Look again</source>
        <translation>重新查找</translation>
    </message>
    <message>
        <source>No forgotten instance: the last provider sync found none.</source>
        <translation>没有遗忘的实例：上次平台同步未发现。</translation>
    </message>
    <message>
        <source>Importing {provider} instance {id} …</source>
        <translation>正在导入 {provider} 实例 {id} …</translation>
    </message>
    <message>
        <source>{provider} instance {id} imported as {alias}: metered from now at {price}.</source>
        <translation>{provider} 实例 {id} 已导入为 {alias}：从现在起按 {price} 计量。</translation>
    </message>
    <message>
        <source>Reading the provider accounts …</source>
        <translation>正在读取平台账户 …</translation>
    </message>
    <message>
        <source>Looked again: %n forgotten instance.</source>
        <translation>重新查找：%n 个遗忘的实例。</translation>
    </message>
    <message>
        <source>Looked again: %n forgotten instances.</source>
        <translation>重新查找：%n 个遗忘的实例。</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
</context>
<context>
    <name>PlatformDialog</name>
    <message>
        <source>Edit platform</source>
        <translation>编辑平台</translation>
    </message>
    <message>
        <source>Add platform</source>
        <translation>添加平台</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>e.g. vast.ai, RunPod, university cluster</source>
        <translation>例如 vast.ai、RunPod、学校集群</translation>
    </message>
    <message>
        <source>Console URL</source>
        <translation>控制台网址</translation>
    </message>
    <message>
        <source>Billed per</source>
        <translation>计费粒度</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
</context>
<context>
    <name>ProviderAccountsDialog</name>
    <message>
        <source>Provider accounts</source>
        <translation>平台账户</translation>
    </message>
    <message>
        <source>the provider&apos;s own</source>
        <translation>平台默认地址</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>API address</source>
        <translation>API 地址</translation>
    </message>
    <message>
        <source>A platform with an account is released, stopped and synced through the provider&apos;s API: the instance is read back until the provider confirms. API keys stay in the system keyring.</source>
        <translation>有账户的平台通过平台 API 释放、关机和同步：操作后会反复读取实例状态，直到平台确认。API 密钥只保存在系统密钥环中。</translation>
    </message>
    <message>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>{platform} now talks to the {provider} API; its key is in the system keyring. Test it, then Sync providers.</source>
        <translation>{platform} 现已接入 {provider} API，密钥保存在系统密钥环中。请先测试，再点“同步平台”。</translation>
    </message>
    <message>
        <source>Provider account added: {platform} ({provider}).</source>
        <translation>已添加平台账户：{platform}（{provider}）。</translation>
    </message>
    <message>
        <source>Remove the provider account</source>
        <translation>移除平台账户</translation>
    </message>
    <message>
        <source>Remove {platform}&apos;s {provider} account and delete its API key from the keyring? Its hosts stay; nothing changes at the provider, but releases then need the provider&apos;s console.</source>
        <translation>移除 {platform} 的 {provider} 账户，并从密钥环中删除其 API 密钥？它的主机会保留，平台上也不会有任何变化，但之后释放实例需要去平台控制台操作。</translation>
    </message>
    <message>
        <source>Removing {platform}&apos;s account …</source>
        <translation>正在移除 {platform} 的账户 …</translation>
    </message>
    <message>
        <source>{platform}&apos;s {provider} account removed, its key deleted.</source>
        <translation>已移除 {platform} 的 {provider} 账户，并删除了其密钥。</translation>
    </message>
    <message>
        <source>Asking {provider} for {platform}&apos;s instances …</source>
        <translation>正在向 {provider} 查询 {platform} 的实例 …</translation>
    </message>
    <message>
        <source>{provider} answered for {platform}: %n instance in the account.</source>
        <translation>{provider} 已返回 {platform} 的结果：账户中有 %n 个实例。</translation>
    </message>
    <message>
        <source>{provider} answered for {platform}: %n instances in the account.</source>
        <translation>{provider} 已返回 {platform} 的结果：账户中有 %n 个实例。</translation>
    </message>
</context>
<context>
    <name>ProviderActions</name>
    <message>
        <source>No provider account yet: add one with Provider accounts… (vast.ai or RunPod).</source>
        <translation>还没有平台账户：请通过“平台账户…”添加（vast.ai 或 RunPod）。</translation>
    </message>
    <message>
        <source>Synced %n provider account: imported {imported}, updated {updated}, stopped {stopped}, gone {gone}, orphans {orphans}.</source>
        <translation>已同步 %n 个平台账户：导入 {imported}，更新 {updated}，关机 {stopped}，已不存在 {gone}，遗忘的实例 {orphans}。</translation>
    </message>
    <message>
        <source>Synced %n provider accounts: imported {imported}, updated {updated}, stopped {stopped}, gone {gone}, orphans {orphans}.</source>
        <translation>已同步 %n 个平台账户：导入 {imported}，更新 {updated}，关机 {stopped}，已不存在 {gone}，遗忘的实例 {orphans}。</translation>
    </message>
    <message>
        <source>%n error: {errors}</source>
        <translation>%n 个错误：{errors}</translation>
    </message>
    <message>
        <source>%n errors: {errors}</source>
        <translation>%n 个错误：{errors}</translation>
    </message>
    <message>
        <source>Syncing the provider accounts …</source>
        <translation>正在同步平台账户 …</translation>
    </message>
    <message>
        <source>The sync failed: {error}</source>
        <translation>同步失败：{error}</translation>
    </message>
</context>
<context>
    <name>SshOptionsDialog</name>
    <message>
        <source>inference server</source>
        <translation>推理服务</translation>
    </message>
    <message>
        <source>SSH options for {alias}</source>
        <translation>{alias} 的 SSH 选项</translation>
    </message>
    <message>
        <source>optional: user@bastion.example:22</source>
        <translation>可选：user@bastion.example:22</translation>
    </message>
    <message>
        <source>Jump host (ProxyJump)</source>
        <translation>跳板机（ProxyJump）</translation>
    </message>
    <message>
        <source>{what} (local port {port})</source>
        <translation>{what}（本地端口 {port}）</translation>
    </message>
    <message>
        <source>Forward</source>
        <translation>端口转发</translation>
    </message>
</context>
<context>
    <name>TrustedKeyRow</name>
    <message>
        <source>Forget trusted key…</source>
        <translation>忘记已信任的密钥…</translation>
    </message>
    <message>
        <source>None yet: the next connection shows the host&apos;s fingerprint to compare.</source>
        <translation>暂无：下次连接时会显示主机指纹供你核对。</translation>
    </message>
    <message>
        <source>The app&apos;s known_hosts could not be read: {error}</source>
        <translation>无法读取应用的 known_hosts：{error}</translation>
    </message>
    <message>
        <source>Forget the trusted host key?</source>
        <translation>忘记已信任的主机密钥？</translation>
    </message>
    <message>
        <source>Forget the host key trusted for {hostname}:{port}? The next connection shows the new key&apos;s fingerprint; trust it only if it matches the one your provider shows for this instance.</source>
        <translation>忘记为 {hostname}:{port} 信任的主机密钥？下次连接时会显示新密钥的指纹；只有与平台为该实例显示的指纹一致时才信任。</translation>
    </message>
</context>
<context>
    <name>TunnelDialog</name>
    <message>
        <source>New tunnel to {alias}</source>
        <translation>新建到 {alias} 的隧道</translation>
    </message>
    <message>
        <source>e.g. Gradio</source>
        <translation>例如 Gradio</translation>
    </message>
    <message>
        <source>port on the host, e.g. 7860</source>
        <translation>主机上的端口，例如 7860</translation>
    </message>
    <message>
        <source>empty: the same port, or the next free one</source>
        <translation>留空：使用相同端口，或下一个空闲端口</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Remote port</source>
        <translation>远程端口</translation>
    </message>
    <message>
        <source>Local port</source>
        <translation>本地端口</translation>
    </message>
    <message>
        <source>Ports are numbers from 1 to 65535.</source>
        <translation>端口须为 1 到 65535 之间的数字。</translation>
    </message>
</context>
<context>
    <name>TunnelsPanel</name>
    <message>
        <source>up</source>
        <translation>已连通</translation>
    </message>
    <message>
        <source>down</source>
        <translation>已断开</translation>
    </message>
    <message>
        <source>blocked</source>
        <translation>受阻</translation>
    </message>
    <message>
        <source>connecting…</source>
        <translation>连接中…</translation>
    </message>
    <message>
        <source>closing…</source>
        <translation>关闭中…</translation>
    </message>
    <message>
        <source>off</source>
        <translation>未开启</translation>
    </message>
    <message>
        <source>up, nothing answers</source>
        <translation>已连通，无响应</translation>
    </message>
    <message>
        <source>&lt;b&gt;Tunnels&lt;/b&gt;</source>
        <translation>&lt;b&gt;隧道&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Tunnel</source>
        <translation>隧道</translation>
    </message>
    <message>
        <source>Port on host</source>
        <translation>主机端口</translation>
    </message>
    <message>
        <source>Local</source>
        <translation>本地</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>说明</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>启动</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Open in browser</source>
        <translation>在浏览器中打开</translation>
    </message>
    <message>
        <source>Add tunnel…</source>
        <translation>添加隧道…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>&lt;b&gt;Tunnels&lt;/b&gt; — select a rented host</source>
        <translation>&lt;b&gt;隧道&lt;/b&gt; — 请选择一台租用主机</translation>
    </message>
    <message>
        <source>&lt;b&gt;Tunnels of {alias}&lt;/b&gt; — over the app&apos;s verified connection; double-click to start or open</source>
        <translation>&lt;b&gt;{alias} 的隧道&lt;/b&gt; — 通过应用已验证的连接；双击可启动或打开</translation>
    </message>
</context>
</TS>
